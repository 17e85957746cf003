import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * The semantic cache's pieces that know no store (docs/caching.md#semantic-mode): the
 * conversation split into its last user turn and the rest, vectors as kept, and the nearest
 * neighbour search, which yields to the event loop between slices of candidates.
 */

/** A request as the semantic cache reads it: the text of the last user turn, and everything else (required equal). */
export interface SemanticParts {
  text: string;
  /** The request without its last user turn: hashed with the surface and model into the prefix key. */
  rest: unknown;
}

/** Embeds a text with the policy's embedding model, through the gateway's own call path (logged and limited as the caller's call). */
export type Embedder = (model: string, text: string) => Promise<readonly number[]>;

/** A kept vector: the exact key of the answer it stands for, and the vector as base64 float32. */
export interface VectorEntry {
  key: string;
  vector: string;
}

/** The text of a chat message's content (a string, or its text parts); null when it holds anything but text. */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (part?.type !== 'text' || typeof part.text !== 'string') return null;
    texts.push(part.text);
  }
  return texts.join('\n');
}

/**
 * A chat body (the internal call's: `messages` and the rest) split for the semantic cache: the
 * last message, when it is the user's and only text, apart from the rest. Null when the
 * conversation does not end with a user's text turn (nothing to embed).
 */
export function semanticPartsOf(body: { messages?: unknown } & Record<string, unknown>, extra: unknown = null): SemanticParts | null {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return null;
  const last = messages[messages.length - 1] as { role?: unknown; content?: unknown; name?: unknown };
  if (last?.role !== 'user') return null;
  const text = textOf(last.content);
  if (text === null || text.trim() === '') return null;
  return { text, rest: { body: { ...body, messages: messages.slice(0, -1) }, name: last.name ?? null, extra } };
}

/** A vector as kept: its float32 bytes in base64 (a quarter of JSON's size, and parsed without a JSON parser). */
export function encodeVector(values: readonly number[]): string {
  const floats = Float32Array.from(values);
  let norm = 0;
  for (const value of floats) norm += value * value;
  norm = Math.sqrt(norm);
  // Kept normalised, so a similarity is a dot product.
  if (norm > 0) for (let index = 0; index < floats.length; index += 1) floats[index] = floats[index]! / norm;
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.byteLength - (bytes.byteLength % 4));
  copy.set(bytes.subarray(0, copy.byteLength));
  return new Float32Array(copy.buffer);
}

/** Candidates compared per turn of the event loop: a slice takes well under a millisecond at 1536 dimensions. */
const SLICE = 256;

/**
 * The candidate most similar (cosine) to `vector`, when its similarity is at least
 * `threshold`; else null. Candidates of another length (another embedding model) are skipped.
 * Yields to the event loop after every slice, so a large namespace never holds other requests up.
 */
export async function nearest(candidates: readonly VectorEntry[], vector: string, threshold: number): Promise<(VectorEntry & { similarity: number }) | null> {
  const query = decodeVector(vector);
  let best: (VectorEntry & { similarity: number }) | null = null;
  for (let start = 0; start < candidates.length; start += SLICE) {
    if (start > 0) await nextTurn();
    for (const candidate of candidates.slice(start, start + SLICE)) {
      const values = decodeVector(candidate.vector);
      if (values.length !== query.length) continue;
      let dot = 0;
      for (let index = 0; index < values.length; index += 1) dot += values[index]! * query[index]!;
      if (dot >= threshold && (best === null || dot > best.similarity)) best = { ...candidate, similarity: dot };
    }
  }
  return best;
}
