import { errorCodes, type FastifyRequest } from 'fastify';
import type { RequestCall } from '../calls/index.js';
import { GatewayError } from '../errors/index.js';
import {
  decodeJsonBytes,
  isPoisoned,
  MAX_JSON_DEPTH,
  maySpellPoisonKey,
  nestsDeeperThan,
  parseDecodedJson,
  parseObjectInSteps,
  topLevelMembers,
  type DecodedJson,
  type ParsedJson,
  type SteppedParse,
} from '../json/index.js';
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

/** The body's JSON text, without a byte order mark. */
function withoutBom(raw: Buffer): Buffer {
  return raw.subarray(0, 3).equals(BOM) ? raw.subarray(3) : raw;
}

function tooDeepError(): GatewayError {
  return new GatewayError(
    'invalid_body',
    `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the most the gateway accepts. Send a flatter body.`,
  );
}

/** The body's JSON text as bytes, without a byte order mark; throws for an empty body or one nested too deep. */
function checkedJsonBytes(raw: Buffer): Buffer {
  if (raw.length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  const bytes = withoutBom(raw);
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) throw tooDeepError();
  return bytes;
}

/** What a body that is not JSON is refused with. */
function invalidJsonError(request: FastifyRequest): Error {
  return encodedBodyError(request.headers['content-encoding']) ?? new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
}

/** The body parsed; throws for text that is not JSON. */
function parsedBody(request: FastifyRequest, decoded: DecodedJson, bytes: Buffer): ParsedJson {
  try {
    return parseDecodedJson(decoded, bytes);
  } catch {
    throw invalidJsonError(request);
  }
}

/** The parsed body, kept with its bytes on the request (and its call); throws for a body that poisons prototypes. */
function acceptedBody(request: FastifyRequest, value: unknown, poisoned: boolean, bytes: Buffer): unknown {
  if (poisoned) throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  request.jsonBytes = bytes;
  // Only keyed routes begin a call (the others keep the decorator's null).
  (request.call as RequestCall | null)?.receivedJson(value, bytes);
  return value;
}

/** A body parsed whole, and whether it poisons prototypes (walked only when its text could spell such a key). */
function acceptedWhole(request: FastifyRequest, { value, text }: ParsedJson, bytes: Buffer): unknown {
  return acceptedBody(request, value, maySpellPoisonKey(text) && isPoisoned(value), bytes);
}

/** Runs a stepped parse to its end, one step per turn of the event loop. */
async function stepsInTurns<T>(turns: TurnQueue, steps: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = await turns.run(() => steps.next());
    if (step.done === true) return step.value;
  }
}

/**
 * A large body parsed in steps, each in its own turn of the event loop, and the route's work
 * after them in one more: a burst of megabyte bodies then holds the loop for one step at a
 * time. An object is parsed a piece at a time (see parseObjectInSteps); any other body, or one
 * laid out so that it cannot be, takes the whole-body stages a turn each.
 */
async function acceptedInTurns(turns: TurnQueue, request: FastifyRequest, raw: Buffer): Promise<unknown> {
  const bytes = withoutBom(raw);
  let stepped: SteppedParse;
  try {
    stepped = await stepsInTurns(turns, parseObjectInSteps(bytes));
  } catch (failure) {
    throw failure instanceof SyntaxError ? invalidJsonError(request) : failure;
  }
  if (stepped.kind === 'too_deep') throw tooDeepError();
  let value: unknown;
  if (stepped.kind === 'parsed') {
    value = acceptedBody(request, stepped.value, stepped.poisoned, bytes);
  } else {
    await turns.run(() => checkedJsonBytes(raw));
    const decoded = await turns.run(() => decodeJsonBytes(bytes));
    const parsed = await turns.run(() => parsedBody(request, decoded, bytes));
    value = await turns.run(() => acceptedWhole(request, parsed, bytes));
    // Found now for the pass-through patch, which would otherwise scan the body in the route's turn.
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) await turns.run(() => topLevelMembers(bytes));
  }
  await turns.run(() => undefined);
  return value;
}

/**
 * JSON bodies, read into one buffer as they arrive (see readBody), refused when nested deeper
 * than MAX_JSON_DEPTH, parsed once (long base64 strings made straight from their bytes, see
 * parseJsonBytes) and kept as bytes. The poisoning check walks the parsed value only when the
 * text could spell a forbidden key (`"__proto__"`, `"constructor"`, or any `\u` escape): three
 * native substring searches instead of two regular expressions over every body, which matters
 * for megabytes of base64 media. Bodies of a megabyte or more are parsed in steps, a turn each.
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
        value = acceptedWhole(request, parsedBody(request, decodeJsonBytes(bytes), bytes), bytes);
      } catch (failure) {
        done(failure as Error, undefined);
        return;
      }
      done(null, value);
    });
  });
}
