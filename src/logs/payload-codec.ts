import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * A record's two payloads as stored: one compressed value holding the request and the
 * response JSON. Raw deflate with a preset dictionary of the JSON every model call repeats
 * (field names, roles, the shape of a completion and its usage): a typical chat pair of
 * ~460 bytes becomes ~100, where deflate alone gives ~280 and brotli ~265 (their headers and
 * empty history cost most of what a small payload could gain). Measured in docs/logging.md.
 *
 * Layout: one format byte, then the deflated UTF-8 of `request + "\n" + response`, each the
 * JSON text or empty for none (JSON.stringify never writes a raw line feed). The format byte
 * names the dictionary, so a later one can be added while older rows stay readable.
 */

const FORMAT_DEFLATE_DICTIONARY_1 = 1;

/** Most common strings last: deflate reaches the end of its window most cheaply. */
const DICTIONARY_1 = Buffer.from(
  [
    '{"type":"text","text":""}{"type":"image_url","image_url":{"url":"","detail":"auto"}}',
    '"tools":[{"type":"function","function":{"name":"","description":"","parameters":{"type":"object","properties":{},"required":[]}}}],"tool_choice":"auto"',
    '"tool_calls":[{"id":"call_","type":"function","function":{"name":"","arguments":"{}"}}]',
    '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":0,"total_tokens":0}}',
    '{"model":"text-embedding-3-small","input":"","encoding_format":"float"}',
    '{"object":"list","embeddings":1,"dimensions":1536,"model":"text-embedding-3-small","usage":{"prompt_tokens":0,"total_tokens":0}}',
    '"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}',
    '{"object":"chat.completion.stream","choices":[{"index":0,"content":"","finish_reason":"stop"}],"usage":{"promptTokens":0,"completionTokens":0,"totalTokens":0,"cachedPromptTokens":null},"complete":true}',
    '{"id":"chatcmpl-","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_","service_tier":"default",',
    '"choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],',
    '"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}',
    '{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":""},{"role":"assistant","content":""}],',
    '"stream":true,"stream_options":{"include_usage":true},"temperature":0.7,"max_tokens":1024}',
  ].join(''),
);

const DEFLATE = { dictionary: DICTIONARY_1 } as const;
const SEPARATOR = '\n';

/**
 * zlib's output buffer for one record, sized to the text (payloads deflate to well under half;
 * more takes a second buffer). zlib's default, 16 KiB a call, is freed only when the garbage
 * collector finds it: at the log's rate that held ~20 MB of native memory for nothing.
 */
function outputChunkBytes(inputBytes: number): number {
  return Math.min(16_384, Math.max(64, inputBytes >> 1));
}

/** The stored value of a record's payloads; null when it has neither. */
export function packPayloads(request: string | null | undefined, response: string | null | undefined): Buffer | null {
  if ((request === null || request === undefined) && (response === null || response === undefined)) return null;
  const text = Buffer.from(`${request ?? ''}${SEPARATOR}${response ?? ''}`);
  const deflated = deflateRawSync(text, { ...DEFLATE, chunkSize: outputChunkBytes(text.length) });
  const stored = Buffer.allocUnsafe(deflated.length + 1);
  stored[0] = FORMAT_DEFLATE_DICTIONARY_1;
  deflated.copy(stored, 1);
  return stored;
}

export interface UnpackedPayloads {
  request: string | null;
  response: string | null;
}

/** The two payloads' JSON texts, as they were packed. */
export function unpackPayloads(stored: Uint8Array): UnpackedPayloads {
  if (stored[0] !== FORMAT_DEFLATE_DICTIONARY_1) throw new Error(`unknown stored payload format ${stored[0]}`);
  const text = inflateRawSync(stored.subarray(1), DEFLATE).toString('utf8');
  const split = text.indexOf(SEPARATOR);
  const request = text.slice(0, split);
  const response = text.slice(split + 1);
  return { request: request.length === 0 ? null : request, response: response.length === 0 ? null : response };
}
