import { errorCodes, type FastifyRequest } from 'fastify';
import type { RequestCall } from '../calls/index.js';
import { GatewayError } from '../errors/index.js';
import { decodeJsonBytes, MAX_JSON_DEPTH, nestsDeeperThan, parseDecodedJson, topLevelMembers, type DecodedJson, type ParsedJson } from '../json/index.js';
import type { GatewayApp } from './app.js';
import { readBody } from './body-reader.js';
import { TurnQueue } from './turn-queue.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A JSON body's bytes as received. Pass-through routes send them upstream with their own
     * fields patched in, instead of serialising the parsed body again.
     */
    jsonBytes: Buffer | undefined;
  }
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Whether a parsed value holds a `__proto__` key, or a `constructor` key whose value has a
 * `prototype` (the two shapes that poison prototypes when merged; Fastify's default parser
 * rejects them the same way).
 */
function isPoisoned(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop() as Record<string, unknown>;
    if (hasOwn.call(node, '__proto__')) return true;
    const constructor = hasOwn.call(node, 'constructor') ? node.constructor : undefined;
    if (typeof constructor === 'object' && constructor !== null && hasOwn.call(constructor, 'prototype')) return true;
    for (const key in node) {
      const value = node[key];
      if (typeof value === 'object' && value !== null) pending.push(value);
    }
  }
  return false;
}

/**
 * A body that is not JSON because it was compressed says so, instead of "not valid JSON".
 * Looked at only once the parse has failed, so a good request pays nothing for it.
 */
function encodedBodyError(encoding: string | undefined): GatewayError | null {
  if (encoding === undefined || /^\s*identity\s*$/i.test(encoding)) return null;
  return new GatewayError(
    'unsupported_media_type',
    `The body is sent with Content-Encoding: ${encoding.slice(0, 40)}, which the gateway does not decode. Send it uncompressed, without Content-Encoding.`,
  );
}

/** UTF-8 byte order mark, which JSON.parse does not accept. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Bodies this large or larger are parsed in steps, a turn of the event loop each (see TurnQueue). */
const LARGE_BODY_BYTES = 1024 * 1024;

/** The body's JSON text as bytes, without a byte order mark; throws for an empty body or one nested too deep. */
function checkedJsonBytes(raw: Buffer): Buffer {
  if (raw.length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  const bytes = raw.subarray(0, 3).equals(BOM) ? raw.subarray(3) : raw;
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
    throw new GatewayError(
      'invalid_body',
      `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the most the gateway accepts. Send a flatter body.`,
    );
  }
  return bytes;
}

/** The body parsed; throws for text that is not JSON. */
function parsedBody(request: FastifyRequest, decoded: DecodedJson, bytes: Buffer): ParsedJson {
  try {
    return parseDecodedJson(decoded, bytes);
  } catch {
    throw encodedBodyError(request.headers['content-encoding']) ?? new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
}

/** The parsed body, kept with its bytes on the request (and its call); throws for a body that poisons prototypes. */
function acceptedBody(request: FastifyRequest, { value, text }: ParsedJson, bytes: Buffer): unknown {
  // As keys, the two names can only be written like this or with a \u escape. With the quote
  // the search skips through base64 quickly; 'constructor' alone stops at every `c` of it.
  const suspect = text.includes('"__proto__"') || text.includes('"constructor"') || text.includes('\\u');
  if (suspect && typeof value === 'object' && value !== null && isPoisoned(value)) throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  request.jsonBytes = bytes;
  // Only keyed routes begin a call (the others keep the decorator's null).
  (request.call as RequestCall | null)?.receivedJson(value, bytes);
  return value;
}

/**
 * A large body's stages, each in its own turn of the event loop, and the route's work after
 * them in one more: a burst of megabyte bodies then holds the loop for one stage at a time.
 */
async function acceptedInTurns(turns: TurnQueue, request: FastifyRequest, raw: Buffer): Promise<unknown> {
  const bytes = await turns.run(() => checkedJsonBytes(raw));
  const decoded = await turns.run(() => decodeJsonBytes(bytes));
  const parsed = await turns.run(() => parsedBody(request, decoded, bytes));
  const value = await turns.run(() => acceptedBody(request, parsed, bytes));
  // Found now for the pass-through patch, which would otherwise scan the body in the route's turn.
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) await turns.run(() => topLevelMembers(bytes));
  await turns.run(() => undefined);
  return value;
}

/**
 * JSON bodies, read into one buffer as they arrive (see readBody), refused when nested deeper
 * than MAX_JSON_DEPTH, parsed once (long base64 strings made straight from their bytes, see
 * parseJsonBytes) and kept as bytes. The poisoning check walks the parsed value only when the
 * text could spell a forbidden key (`"__proto__"`, `"constructor"`, or any `\u` escape): three
 * native substring searches instead of two regular expressions over every body, which matters
 * for megabytes of base64 media. Bodies of a megabyte or more take their stages in turns.
 */
export function registerJsonBody(app: GatewayApp, bodyLimit: number): void {
  const turns = new TurnQueue();
  app.decorateRequest('jsonBytes', undefined);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    readBody(payload, request.headers['content-length'], request.routeOptions.bodyLimit ?? bodyLimit, (error, raw) => {
      if (error !== null || raw === undefined) {
        done(error, undefined);
        return;
      }
      if (raw.length >= LARGE_BODY_BYTES) {
        acceptedInTurns(turns, request, raw).then(
          (value) => done(null, value),
          (failure: Error) => done(failure, undefined),
        );
        return;
      }
      let value: unknown;
      try {
        const bytes = checkedJsonBytes(raw);
        value = acceptedBody(request, parsedBody(request, decodeJsonBytes(bytes), bytes), bytes);
      } catch (failure) {
        done(failure as Error, undefined);
        return;
      }
      done(null, value);
    });
  });
}
