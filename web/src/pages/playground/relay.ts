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

export async function relayJson<T>(keyId: string, endpoint: PlaygroundEndpoint, body: unknown, signal?: AbortSignal): Promise<Relayed<T>> {
  const response = await send('POST', pathOf(keyId, endpoint), body, signal);
  return { value: (await response.json()) as T, requestId: response.headers.get('x-request-id') };
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
  if (response.body === null) throw new StreamFailure('The gateway sent no event stream.', requestId);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  let usage: ChatChunk['usage'] = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new StreamFailure('The event stream ended before data: [DONE]; the answer may be incomplete.', requestId);
    buffered += value;
    let end: number;
    while ((end = buffered.indexOf('\n\n')) !== -1) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;
      if (data === '[DONE]') return { value: usage, requestId };
      const chunk = JSON.parse(data) as ChatChunk;
      if (chunk.error !== undefined) throw new StreamFailure(chunk.error.message, requestId);
      const text = chunk.choices?.[0]?.delta?.content;
      if (typeof text === 'string' && text.length > 0) onText(text);
      if (chunk.usage) usage = chunk.usage;
    }
  }
}
