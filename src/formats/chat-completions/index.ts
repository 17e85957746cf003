import type { JsonObject } from '../../model-api/index.js';
import { showRequestedModel, upstreamBody } from '../openai-bodies.js';
import type { ApiFormat, DecodedCall } from '../types.js';
import { encodeChatError } from './errors.js';
import { ChatCompletionsStreamEncoder } from './stream.js';

/** The fields of an OpenAI chat-completions request the gateway reads; the rest goes to the provider as sent. */
export interface ChatCompletionBody extends JsonObject {
  model: string;
  messages: unknown[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
  provider?: string;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  n?: number | null;
}

export interface ChatDecodedCall extends DecodedCall {
  /** `stream_options.include_usage`. */
  includeUsage: boolean;
}

/**
 * OpenAI's chat completions, the gateway's first format and its internal shape: the request
 * goes to the providers as sent (minus the gateway's own fields), the answer comes back with
 * the model the caller asked for.
 */
export const chatCompletionsFormat: ApiFormat<ChatCompletionBody, ChatDecodedCall> = {
  name: 'chat-completions',
  decodeRequest: (body, sourceJson) => ({
    model: body.model,
    stream: body.stream === true,
    providerHint: body.provider,
    body: upstreamBody(body),
    sourceJson,
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    choices: body.n ?? 1,
    // Sent as it came: whatever a provider leaves out it names itself (ChatModelProvider.hintsDropped).
    dropped: [],
    includeUsage: body.stream_options?.include_usage === true,
  }),
  encodeResponse: (result, decoded) => showRequestedModel(result.completion, decoded.model),
  streamEncoder: (decoded, options) =>
    new ChatCompletionsStreamEncoder({ ...options, requestedModel: decoded.model, includeUsage: decoded.includeUsage }),
  encodeError: encodeChatError,
};
