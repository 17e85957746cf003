import { createHash } from 'node:crypto';
import type { AssetRecords, AssetRow } from '../store/asset-records.js';
import { newId } from '../store/ids.js';
import type { GeneratedImage, RunMedia, StoredMedia, TurnImage } from '../runtime/types.js';
import { detectImageType } from './image-types.js';
import type { CheckedImage } from './ingest.js';
import { newStorageKey, type MediaStore } from './media-store.js';

/** What the run response lists for each image of the turn (docs/agents.md, "Media"). */
export interface InputAsset {
  asset_id: string;
  url: string;
  mime_type: string | null;
  bytes: number | null;
  sha256: string | null;
  source: 'inline' | 'url';
}

export interface AssetScope {
  agentId: string;
  conversationId: string;
  runId: string;
  owner: string;
}

/** The gateway URL that serves an archived asset. */
export type AssetUrl = (assetId: string) => string;

/**
 * Agent media over the media store and the asset records: archives the turn's images
 * byte-for-byte and the images models generate, and loads prior media for later turns.
 */
export class AgentMedia implements RunMedia {
  constructor(
    private readonly store: MediaStore,
    private readonly records: AssetRecords,
    private readonly scope: AssetScope,
    private readonly assetUrl: AssetUrl,
  ) {}

  private row(fields: Pick<AssetRow, 'source' | 'mime_type' | 'bytes' | 'sha256' | 'storage_key' | 'source_url' | 'filename'>): AssetRow {
    return {
      id: newId('asset'),
      agent_id: this.scope.agentId,
      conversation_id: this.scope.conversationId,
      run_id: this.scope.runId,
      owner: this.scope.owner,
      created_at: Date.now(),
      ...fields,
    };
  }

  /** Archives the turn's checked images; URLs are recorded as provenance, not fetched. */
  async archiveTurn(images: readonly CheckedImage[]): Promise<{ images: TurnImage[]; assets: InputAsset[] }> {
    const rows: AssetRow[] = [];
    const turnImages: TurnImage[] = [];
    const assets: InputAsset[] = [];
    for (const image of images) {
      if (image.kind === 'inline') {
        const key = newStorageKey();
        await this.store.put(key, image.data);
        const row = this.row({ source: 'inline', mime_type: image.mimeType, bytes: image.data.length, sha256: image.sha256, storage_key: key, source_url: null, filename: image.filename });
        rows.push(row);
        turnImages.push({ kind: 'inline', assetId: row.id, mimeType: image.mimeType, data: image.data });
        assets.push({ asset_id: row.id, url: this.assetUrl(row.id), mime_type: image.mimeType, bytes: image.data.length, sha256: image.sha256, source: 'inline' });
      } else {
        const row = this.row({ source: 'url', mime_type: null, bytes: null, sha256: null, storage_key: null, source_url: image.url, filename: image.filename });
        rows.push(row);
        turnImages.push({ kind: 'url', assetId: row.id, url: image.url });
        assets.push({ asset_id: row.id, url: image.url, mime_type: null, bytes: null, sha256: null, source: 'url' });
      }
    }
    await this.records.insert(rows);
    return { images: turnImages, assets };
  }

  async load(assetId: string, maxBytes: number): Promise<StoredMedia | null> {
    const row = await this.records.get(assetId);
    if (row === undefined) return null;
    if (row.source_url !== null) return { kind: 'url', url: row.source_url };
    if (row.storage_key === null || row.mime_type === null) return null;
    // The record knows the size: an image that cannot fit is not read from storage at all.
    if (row.bytes !== null && row.bytes > maxBytes) return { kind: 'over_budget' };
    const data = await this.store.get(row.storage_key);
    return data === null ? null : { kind: 'inline', mimeType: row.mime_type, data };
  }

  async storeGenerated(image: { data: Buffer } | { url: string }, _nodeId: string): Promise<GeneratedImage> {
    if ('url' in image) {
      // A provider that answered with a link only: kept as provenance, handed on as it is.
      const row = this.row({ source: 'generated', mime_type: null, bytes: null, sha256: null, storage_key: null, source_url: image.url, filename: null });
      await this.records.insert([row]);
      return { assetId: row.id, url: image.url, mimeType: null };
    }
    const mimeType = (await detectImageType(image.data)) ?? 'application/octet-stream';
    const key = newStorageKey();
    await this.store.put(key, image.data);
    const sha256 = createHash('sha256').update(image.data).digest('hex');
    const row = this.row({ source: 'generated', mime_type: mimeType, bytes: image.data.length, sha256, storage_key: key, source_url: null, filename: null });
    await this.records.insert([row]);
    return { assetId: row.id, url: this.assetUrl(row.id), mimeType };
  }
}
