import { randomUUID } from 'node:crypto';
import type { EmbeddingVectors, JsonObject } from '../../model-api/index.js';
import { parseJsonObject } from './wire.js';

/**
 * Reads an OpenAI embeddings response (`{"object": "list", "data": [{"embedding": […]}, …],
 * "model", "usage"}`) without turning its float vectors into numbers. The adapter forwards
 * the provider's bytes and needs only the other members, how many embeddings there are and
 * the size of the first; JSON.parse is slow on numbers, and a vector holds hundreds or
 * thousands of them.
 *
 * Each `"embedding": [numbers]` whose list follows JSON's number grammar is replaced by a
 * string holding its element count, then JSON.parse reads the short text. That text is JSON
 * exactly when the original is: a replaced list stood where a value stands (after a key's
 * colon) and was a valid one, and JSON.parse reads all the rest; a malformed number is not
 * replaced, so JSON.parse meets it. When not every count ends up as the `embedding` of a
 * `data` item (the key stood inside a string, was repeated, or stood outside `data`), the
 * original text is parsed whole instead, and so is any text whose short form JSON.parse
 * does not read as an object: a rejection comes from JSON.parse of the original, or from a
 * `data` member that is not a list (no embeddings response at all).
 */

export interface EmbeddingList {
  /** The response's members other than `data`. */
  response: JsonObject;
  vectors: EmbeddingVectors;
}

const KEY = '"embedding"';
/**
 * A replaced vector reads as the string COUNTED + its count. A provider cannot send that
 * string (it differs in every process), so a count is never mistaken for a value it sent.
 */
const COUNTED = `vector-count-${randomUUID()}:`;
/** JSON's whitespace only: `\s` would also take characters JSON.parse rejects (\v, \u00a0, …). */
const SPACE = '[ \\n\\r\\t]*';
const NUMBER = '-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][+-]?\\d+)?';
/**
 * `"embedding": [numbers]` where `lastIndex` is (sticky: the key is found with indexOf, which
 * skips base64 and other text faster than the regex's own search); the group is the list,
 * absent when it is empty.
 */
const FLOAT_VECTOR = new RegExp(`${KEY}${SPACE}:${SPACE}\\[${SPACE}(${NUMBER}${SPACE}(?:,${SPACE}${NUMBER}${SPACE})*)?\\]`, 'y');

function commasIn(text: string): number {
  let count = 0;
  for (let index = text.indexOf(','); index >= 0; index = text.indexOf(',', index + 1)) count += 1;
  return count;
}

/** The text with each float vector replaced by its count, and how many were replaced. */
function shortened(text: string): { short: string; replaced: number } {
  let short = '';
  let replaced = 0;
  let copied = 0;
  let from = 0;
  for (let at = text.indexOf(KEY); at >= 0; at = text.indexOf(KEY, from)) {
    FLOAT_VECTOR.lastIndex = at;
    const vector = FLOAT_VECTOR.exec(text);
    from = at + 1;
    if (vector === null) continue;
    const count = vector[1] === undefined ? 0 : commasIn(vector[1]) + 1;
    short += `${text.slice(copied, at)}${KEY}:"${COUNTED}${count}"`;
    replaced += 1;
    copied = from = FLOAT_VECTOR.lastIndex;
  }
  return { short: short + text.slice(copied), replaced };
}

function embeddingOf(item: unknown): unknown {
  return typeof item === 'object' && item !== null ? (item as { embedding?: unknown }).embedding : undefined;
}

/** The element count a vector was replaced by; undefined for any other embedding. */
function countOf(embedding: unknown): number | undefined {
  return typeof embedding === 'string' && embedding.startsWith(COUNTED) ? Number(embedding.slice(COUNTED.length)) : undefined;
}

/** Whether all `replaced` counts stand as the `embedding` of `data` items (so none stands anywhere else, and none was lost). */
function countsLanded(body: JsonObject, replaced: number): boolean {
  if (!Array.isArray(body.data)) return false;
  let found = 0;
  for (const item of body.data as unknown[]) if (countOf(embeddingOf(item)) !== undefined) found += 1;
  return found === replaced;
}

function listOf(body: JsonObject): EmbeddingList | undefined {
  const { data, ...response } = body;
  if (!Array.isArray(data)) return undefined;
  const items = data as unknown[];
  const first = embeddingOf(items[0]);
  return { response, vectors: { count: items.length, dimensions: Array.isArray(first) ? first.length : countOf(first) ?? null } };
}

/** The response read from its text; undefined where JSON.parse throws, or the text is not a JSON object with a `data` list. */
export function readEmbeddingList(text: string): EmbeddingList | undefined {
  const { short, replaced } = shortened(text);
  if (replaced > 0) {
    const body = parseJsonObject(short);
    if (body !== undefined && countsLanded(body, replaced)) return listOf(body);
  }
  const body = parseJsonObject(text);
  return body === undefined ? undefined : listOf(body);
}
