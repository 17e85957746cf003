import type { MediaStore } from './media-store.js';
import { sha256Hex, signS3Request, type S3Credentials } from './s3-signature.js';

export interface S3Settings extends S3Credentials {
  /** `https://s3.<region>.amazonaws.com`, or the endpoint of MinIO, R2, … */
  endpoint: string;
  bucket: string;
}

const KEY = /^[0-9a-f]{32}$/;
const REQUEST_TIMEOUT_MS = 30_000;
const EMPTY_SHA256 = sha256Hex('');

/**
 * Agent media in an S3-compatible bucket (path-style URLs, Signature Version 4), so several
 * instances share assets. Objects are named `assets/<key>` with the gateway-made key.
 */
export class S3MediaStore implements MediaStore {
  constructor(
    private readonly settings: S3Settings,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  private urlOf(key: string): URL {
    if (!KEY.test(key)) throw new Error('media storage keys are 32 hex characters made by newStorageKey');
    return new URL(`${this.settings.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(this.settings.bucket)}/assets/${key}`);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const url = this.urlOf(key);
    const headers = signS3Request(
      { method: 'PUT', url, headers: { 'content-type': 'application/octet-stream' }, payloadHash: sha256Hex(data), date: new Date() },
      this.settings,
    );
    const response = await this.fetchImpl(url, { method: 'PUT', headers, body: data, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`the media bucket refused to store an object (HTTP ${response.status})`);
  }

  async get(key: string): Promise<Buffer | null> {
    const url = this.urlOf(key);
    const headers = signS3Request({ method: 'GET', url, headers: {}, payloadHash: EMPTY_SHA256, date: new Date() }, this.settings);
    const response = await this.fetchImpl(url, { method: 'GET', headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const body = Buffer.from(await response.arrayBuffer());
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`the media bucket refused to read an object (HTTP ${response.status})`);
    return body;
  }
}
