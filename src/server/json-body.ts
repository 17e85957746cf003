import { errorCodes } from 'fastify';
import type { RequestCall } from '../calls/index.js';
import { GatewayError } from '../errors/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBytes, type ParsedJson } from '../json/index.js';
import type { GatewayApp } from './app.js';

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

/**
 * JSON bodies, refused when nested deeper than MAX_JSON_DEPTH, parsed once (long base64
 * strings made straight from their bytes, see parseJsonBytes) and kept as bytes. The poisoning check walks the parsed value only
 * when the text could spell a forbidden key (`"__proto__"`, `"constructor"`, or any `\u` escape):
 * three native substring searches instead of two regular expressions over every body, which
 * matters for megabytes of base64 media.
 */
export function registerJsonBody(app: GatewayApp, bodyLimit: number): void {
  app.decorateRequest('jsonBytes', undefined);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const raw = body as Buffer;
    if (raw.length === 0) {
      done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    const bytes = raw.subarray(0, 3).equals(BOM) ? raw.subarray(3) : raw;
    if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
      done(
        new GatewayError(
          'invalid_body',
          `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the most the gateway accepts. Send a flatter body.`,
        ),
        undefined,
      );
      return;
    }
    let parsed: ParsedJson;
    try {
      parsed = parseJsonBytes(bytes);
    } catch {
      done(encodedBodyError(request.headers['content-encoding']) ?? new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    const { value, text } = parsed;
    // As keys, the two names can only be written like this or with a \u escape. With the quote
    // the search skips through base64 quickly; 'constructor' alone stops at every `c` of it.
    const suspect = text.includes('"__proto__"') || text.includes('"constructor"') || text.includes('\\u');
    if (suspect && typeof value === 'object' && value !== null && isPoisoned(value)) {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    request.jsonBytes = bytes;
    // Only keyed routes begin a call (the others keep the decorator's null).
    (request.call as RequestCall | null)?.receivedJson(value, bytes);
    done(null, value);
  });
}
