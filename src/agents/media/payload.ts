import { createHash } from 'node:crypto';
import type { InputAsset } from './agent-media.js';

const DATA_URI = /^data:[^,]*;base64,/i;

/**
 * The run request as the log keeps it: each inline image the run archived is replaced by a
 * reference to its asset, so logs and traces never hold base64 (anything else left is
 * replaced by the log's own redaction).
 */
export function withAssetReferences(body: unknown, assets: readonly InputAsset[]): unknown {
  const bySha = new Map(assets.filter((asset) => asset.sha256 !== null).map((asset) => [asset.sha256!, asset.asset_id]));
  const replace = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const header = DATA_URI.exec(value.slice(0, 256));
      if (header === null) return value;
      const sha256 = createHash('sha256').update(Buffer.from(value.slice(header[0].length), 'base64')).digest('hex');
      const assetId = bySha.get(sha256);
      return assetId === undefined ? value : `asset:${assetId}`;
    }
    if (Array.isArray(value)) return value.map(replace);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, replace(field)]));
    return value;
  };
  return replace(body);
}
