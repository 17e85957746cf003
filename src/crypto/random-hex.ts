import { randomBytes } from 'node:crypto';

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/**
 * `byteCount` random bytes from the system's CSPRNG, as hex. The bytes are drawn 4 KiB at a
 * time: one `randomBytes` call per id costs a native job each, and ids are made on every
 * request (request ids, the Responses API's item ids).
 */
export function randomHex(byteCount: number): string {
  if (byteCount > POOL_BYTES) return randomBytes(byteCount).toString('hex');
  if (offset + byteCount > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  offset += byteCount;
  return pool.toString('hex', offset - byteCount, offset);
}
