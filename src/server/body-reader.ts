import type { Readable } from 'node:stream';
import { errorCodes } from 'fastify';

/**
 * Reads a request body into one buffer. With a Content-Length (what SDKs send) the buffer is
 * made at that size when the first bytes arrive and each chunk is copied in as it comes, so
 * a large body costs the event loop many short copies while it arrives instead of one long
 * join at its end (on this kind of VM, touching megabytes of fresh memory at once is what
 * takes the time). A chunked body is joined at its end. Same refusals as
 * Fastify's own reader: a body over `limit` (by its header or its bytes) and a body shorter
 * than its Content-Length.
 *
 * The buffer is an ordinary one, never a SharedArrayBuffer: V8 counts shared memory toward no
 * isolate's heap, so bodies held in it (the log's queue keeps them past two scavenges) would
 * wait for a full collection that nothing brings on, and RSS would grow by every large body.
 */
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
      whole ??= Buffer.allocUnsafe(declared);
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
