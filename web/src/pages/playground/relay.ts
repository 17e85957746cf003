import type { PlaygroundEndpoint } from '@modelgate/admin-api';
import { ApiError, send } from '../../api.js';

/**
 * Calls of the public model endpoints made through the admin API's playground relay, as the
 * chosen key: the body and the answer are those of `POST /v1/{endpoint}`.
 */

const pathOf = (keyId: string, endpoint: PlaygroundEndpoint) => `/playground/keys/${encodeURIComponent(keyId)}/v1/${endpoint}`;

/** The answer and the request id the gateway gave the call (the request log's id). */
export interface Relayed<T> {
  value: T;
  requestId: string | null;
}

async function relayJsonAt<T>(path: string, body: unknown, signal?: AbortSignal): Promise<Relayed<T>> {
  const response = await send('POST', path, body, signal);
  return { value: (await response.json()) as T, requestId: response.headers.get('x-request-id') };
}

export function relayJson<T>(keyId: string, endpoint: PlaygroundEndpoint, body: unknown, signal?: AbortSignal): Promise<Relayed<T>> {
  return relayJsonAt<T>(pathOf(keyId, endpoint), body, signal);
}

export async function relayBytes(keyId: string, endpoint: PlaygroundEndpoint, body: unknown, signal?: AbortSignal): Promise<Relayed<Blob>> {
  const response = await send('POST', pathOf(keyId, endpoint), body, signal);
  return { value: await response.blob(), requestId: response.headers.get('x-request-id') };
}

/** A stream that failed after the gateway answered: the answer's request id comes with the message. */
class StreamFailure extends Error {
  constructor(
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

/** The request id of a failed call, when the gateway gave one: its record in the request log. */
export function requestIdOf(failure: unknown): string | null {
  return failure instanceof ApiError || failure instanceof StreamFailure ? failure.requestId : null;
}

interface ChatChunk {
  choices?: { delta?: { content?: string | null } }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  error?: { message: string; code?: string };
}

/** The data of each server-sent event of an answer, as it arrives (any line ending); done once the stream ends. */
async function* eventData(response: Response, requestId: string | null): AsyncGenerator<string> {
  if (response.body === null) throw new StreamFailure('The gateway sent no event stream.', requestId);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    // Lines may end in CR LF (Google's events do), LF or CR alone.
    buffered = (buffered + value).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffered.indexOf('\n\n')) !== -1) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data !== '') yield data;
    }
  }
}

/**
 * A streamed chat: calls `onText` with each piece of text as its server-sent event arrives,
 * and resolves with the usage once `data: [DONE]` came. An error event is thrown.
 */
export async function relayChatStream(
  keyId: string,
  body: unknown,
  onText: (text: string) => void,
  signal: AbortSignal,
): Promise<Relayed<ChatChunk['usage']>> {
  const response = await send('POST', pathOf(keyId, 'chat/completions'), body, signal);
  const requestId = response.headers.get('x-request-id');
  let usage: ChatChunk['usage'] = null;
  for await (const data of eventData(response, requestId)) {
    if (data === '[DONE]') return { value: usage, requestId };
    const chunk = JSON.parse(data) as ChatChunk;
    if (chunk.error !== undefined) throw new StreamFailure(chunk.error.message, requestId);
    const text = chunk.choices?.[0]?.delta?.content;
    if (typeof text === 'string' && text.length > 0) onText(text);
    if (chunk.usage) usage = chunk.usage;
  }
  throw new StreamFailure('The event stream ended before data: [DONE]; the answer may be incomplete.', requestId);
}

/** A Gemini API GenerateContentResponse, as far as the playground reads it. */
export interface GeminiAnswer {
  candidates?: { content?: { parts?: { text?: string; thought?: boolean }[] }; finishReason?: string }[];
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; thoughtsTokenCount?: number };
  error?: { message: string };
}

/** The answer's text (its thoughts left out). */
export function geminiTextOf(answer: GeminiAnswer): string {
  return (answer.candidates?.[0]?.content?.parts ?? [])
    .filter((part) => part.thought !== true && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

const geminiPathOf = (keyId: string, model: string, method: 'generateContent' | 'streamGenerateContent?alt=sse') =>
  `/playground/keys/${encodeURIComponent(keyId)}/v1beta/models/${encodeURIComponent(model)}:${method}`;

/** A Gemini API answer as the playground shows it: the text and the usage. */
export interface GeminiReply {
  text: string;
  usage: GeminiAnswer['usageMetadata'] | null;
}

/**
 * A Gemini API call of `model` through the relay: `generateContent`, or with `onText`
 * `streamGenerateContent?alt=sse`, its text handed over as each event arrives (a stream's
 * last event carries the usage whole). An error event is thrown.
 */
export async function relayGemini(keyId: string, model: string, body: unknown, onText: ((text: string) => void) | null, signal: AbortSignal): Promise<Relayed<GeminiReply>> {
  if (onText === null) {
    const { value, requestId } = await relayJsonAt<GeminiAnswer>(geminiPathOf(keyId, model, 'generateContent'), body, signal);
    return { value: { text: geminiTextOf(value), usage: value.usageMetadata ?? null }, requestId };
  }
  const response = await send('POST', geminiPathOf(keyId, model, 'streamGenerateContent?alt=sse'), body, signal);
  const requestId = response.headers.get('x-request-id');
  const reply: GeminiReply = { text: '', usage: null };
  for await (const data of eventData(response, requestId)) {
    const chunk = JSON.parse(data) as GeminiAnswer;
    if (chunk.error !== undefined) throw new StreamFailure(chunk.error.message, requestId);
    const text = geminiTextOf(chunk);
    if (text.length > 0) {
      reply.text += text;
      onText(text);
    }
    if (chunk.usageMetadata !== undefined) reply.usage = chunk.usageMetadata;
  }
  return { value: reply, requestId };
}
