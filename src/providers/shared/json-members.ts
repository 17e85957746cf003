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
 * The JSON object `source` with `set` members first, then the source's members except
 * those in `set` or `remove`. A key the source repeats keeps only its last value, the one
 * JSON.parse (and so the gateway's validation) saw.
 */
export function patchJsonObject(source: Buffer, set: JsonObject, remove: readonly string[]): Buffer {
  const members = topLevelMembers(source);
  const last = new Map<string, number>();
  members.forEach((member, position) => last.set(member.key, position));
  const pieces: Uint8Array[] = Object.entries(set).map(([key, value]) => Buffer.from(`${JSON.stringify(key)}:${JSON.stringify(value)}`));
  members.forEach((member, position) => {
    if (last.get(member.key) === position && !Object.hasOwn(set, member.key) && !remove.includes(member.key)) {
      pieces.push(source.subarray(member.start, member.end));
    }
  });
  const parts: Uint8Array[] = [OPEN];
  pieces.forEach((piece, index) => parts.push(...(index === 0 ? [piece] : [COMMA, piece])));
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/** The caller's fields that are the gateway's (see PassThroughSource): never forwarded as sent. */
const GATEWAY_FIELDS = ['model', 'stream', 'provider'];

/** Below this size serialising the parsed body again is cheaper than scanning its bytes (measured). */
const PATCH_MIN_BYTES = 512;

/** The JSON a pass-through adapter sends: the call's body with `set` (the adapter's own members) on top. */
export function passThroughJson(call: PassThroughSource, set: JsonObject): Buffer {
  if (call.sourceJson === undefined || call.sourceJson.length < PATCH_MIN_BYTES) return Buffer.from(JSON.stringify(withMembers(call.body, set)));
  return patchJsonObject(call.sourceJson, set, GATEWAY_FIELDS);
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
