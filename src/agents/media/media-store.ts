import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Where archived media bytes live. Keys are made by `newStorageKey` — random, never derived
 * from an id or name a caller sent — so no caller input ever becomes part of a path or an
 * object name. The filesystem store is the default; an S3-compatible store implements the
 * same two methods.
 */
export interface MediaStore {
  put(key: string, data: Buffer): Promise<void>;
  /** The bytes, or null when the object is missing. */
  get(key: string): Promise<Buffer | null>;
}

const KEY = /^[0-9a-f]{32}$/;

export function newStorageKey(): string {
  return randomBytes(16).toString('hex');
}

function checkedKey(key: string): string {
  if (!KEY.test(key)) throw new Error('media storage keys are 32 hex characters made by newStorageKey');
  return key;
}

/** Media under `<dataDir>/assets/<2 hex>/<key>`, private to the gateway's user. */
export class FilesystemMediaStore implements MediaStore {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    const checked = checkedKey(key);
    return join(this.root, checked.slice(0, 2), checked);
  }

  async put(key: string, data: Buffer): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(join(this.root, key.slice(0, 2)), { recursive: true, mode: 0o700 });
    // Written aside and renamed, so a reader never sees half a file.
    const partial = `${path}.${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, data, { mode: 0o600, flag: 'wx' });
    await rename(partial, path);
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      return await readFile(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}
