import type { Readable } from 'node:stream';
import { errorCodes } from 'fastify';

/**
 * Reads a request body into one buffer. With a Content-Length (what SDKs send) the buffer is
 * made at that size when the first bytes arrive and each chunk is copied in as it comes, so
 * a large body costs the event loop many short copies while it arrives instead of one long
 * join at its end (on this kind of VM, touching megabytes of fresh memory at once is what
 * takes the time). A chunked body is joined at its end, as before. Same refusals as
 * Fastify's own reader: a body over `limit` (by its header or its bytes) and a body shorter
 * than its Content-Length.
 *
 * A sized body of SHARED_BODY_BYTES or more is held in shared memory: the request log's
 * thread, which stores such a body as received, then reads the same bytes, where a copy into
 * the message took the event loop about 6 ms per megabyte.
 */
const SHARED_BODY_BYTES = 64 * 1024;

export function readBody(payload: Readable, contentLengthHeader: string | undefined, limit: number, done: (error: Error | null, bytes?: Buffer) => void): void {
  const declared = contentLengthHeader === undefined ? Number.NaN : Number(contentLengthHeader);
  if (declared > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const sized = Number.isInteger(declared) && declared > 0;
  let whole: Buffer | undefined;
  const chunks: Buffer[] = [];
  let received = 0;

  const stop = () => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
  };
  function onData(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (received + bytes.length > (sized ? Math.min(declared, limit) : limit)) {
      stop();
      done(received + bytes.length > limit ? new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE() : new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    if (sized) {
      whole ??= declared >= SHARED_BODY_BYTES ? Buffer.from(new SharedArrayBuffer(declared)) : Buffer.allocUnsafe(declared);
      bytes.copy(whole, received);
    } else {
      chunks.push(bytes);
    }
    received += bytes.length;
  }
  function onEnd(): void {
    stop();
    if (!Number.isNaN(declared) && received !== declared) {
      done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    done(null, whole ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)));
  }
  function onError(error: Error & { statusCode?: number }): void {
    stop();
    if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
    done(error);
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}
