import { topLevelMembers } from '../../json/index.js';
import type { JsonObject, PassThroughSource } from '../../model-api/index.js';

/**
 * Rewrites the top-level members of a JSON object's bytes without parsing or serialising
 * the rest: a large pass-through body goes upstream as the caller wrote it, with the
 * adapter's own members in front. The input must be valid JSON (it was parsed before).
 */

const OPEN = Buffer.from('{');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('}');

/**
 * JSON bytes in order, sent one after another: a large body's members go upstream from the
 * caller's bytes without being copied into one buffer first.
 */
export type JsonPieces = readonly Buffer[];

/** A member at least this long is a piece of its own; smaller parts are joined, since each piece is a socket write of its own. */
const OWN_PIECE_MIN_BYTES = 64 * 1024;

/**
 * The JSON object `source` with `set` members first, then the source's members except
 * those in `set` or `remove`. A key the source repeats keeps only its last value, the one
 * JSON.parse (and so the gateway's validation) saw.
 */
export function patchJsonObject(source: Buffer, set: JsonObject, remove: readonly string[]): Buffer {
  const bytes = patchJsonPieces(source, set, remove);
  return Buffer.isBuffer(bytes) ? bytes : Buffer.concat(bytes);
}

/** patchJsonObject's bytes, as pieces when a member is large (see JsonPieces). */
function patchJsonPieces(source: Buffer, set: JsonObject, remove: readonly string[]): Buffer | JsonPieces {
  const members = topLevelMembers(source);
  const last = new Map<string, number>();
  members.forEach((member, position) => last.set(member.key, position));
  const kept: Buffer[] = Object.entries(set).map(([key, value]) => Buffer.from(`${JSON.stringify(key)}:${JSON.stringify(value)}`));
  members.forEach((member, position) => {
    if (last.get(member.key) === position && !Object.hasOwn(set, member.key) && !remove.includes(member.key)) {
      kept.push(source.subarray(member.start, member.end));
    }
  });
  const pieces: Buffer[] = [];
  let small: Buffer[] = [OPEN];
  const joinSmall = () => {
    if (small.length > 0) pieces.push(small.length === 1 ? small[0]! : Buffer.concat(small));
    small = [];
  };
  kept.forEach((member, index) => {
    if (index > 0) small.push(COMMA);
    if (member.length < OWN_PIECE_MIN_BYTES) {
      small.push(member);
      return;
    }
    joinSmall();
    pieces.push(member);
  });
  small.push(CLOSE);
  joinSmall();
  return pieces.length === 1 ? pieces[0]! : pieces;
}

/** The caller's fields that are the gateway's (see PassThroughSource): never forwarded as sent. */
const GATEWAY_FIELDS = ['model', 'stream', 'provider'];

/** Below this size serialising the parsed body again is cheaper than scanning its bytes (measured). */
const PATCH_MIN_BYTES = 512;

/** The JSON a pass-through adapter sends: the call's body with `set` (the adapter's own members) on top. */
export function passThroughJson(call: PassThroughSource, set: JsonObject): Buffer | JsonPieces {
  if (call.sourceJson === undefined || call.sourceJson.length < PATCH_MIN_BYTES) return Buffer.from(JSON.stringify(withMembers(call.body, set)));
  return patchJsonPieces(call.sourceJson, set, GATEWAY_FIELDS);
}

/**
 * `{ ...body, ...set }`, built with Object.assign: in Node 20's V8 an object literal with two
 * spreads takes a slow path (with the serialisation after it, more than twice the time for a
 * small chat body). Object.assign sets members one by one, which for a
 * member named `__proto__` would set the new object's prototype instead: such a body (the
 * routes' JSON parser refuses one, but bodies are also built elsewhere) takes the spread.
 */
function withMembers(body: JsonObject, set: JsonObject): JsonObject {
  return Object.hasOwn(body, '__proto__') ? { ...body, ...set } : Object.assign({}, body, set);
}
