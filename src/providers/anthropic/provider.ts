import { fromCallerInput } from '../shared/provider-json.js';
import { startSseStream } from '../shared/sse-stream.js';
import type { CallExtensions, ChatCall, ChatCompletionResult, ChatModelProvider, ChatStream, JsonObject, Provider } from '../../model-api/index.js';
import { malformedResponse } from './errors.js';
import { AnthropicHttp, type AnthropicProviderOptions } from './http.js';
import { AnthropicMessages, inputTokensOf } from './messages.js';
import { hintsDroppedOf, toAnthropicRequest } from './request-mapping.js';
import { toChatCompletion } from './response-mapping.js';
import { AnthropicChatFrames } from './stream-mapping.js';
import { parseResponse } from './wire.js';

export type { AnthropicProviderOptions } from './http.js';

/**
 * Anthropic through its native Messages API: chat (translated from and to the OpenAI shape)
 * and messages (the Messages API passed through for callers of that API). Anthropic offers
 * no embeddings, images, speech or transcription, so those capabilities stay undefined.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  const http = new AnthropicHttp(options);
  return { name: options.name, acceptsRemoteImageUrls: true, chat: new AnthropicChat(http), messages: new AnthropicMessages(http) };
}

class AnthropicChat implements ChatModelProvider {
  constructor(private readonly http: AnthropicHttp) {}

  hintsDropped(body: JsonObject, extensions?: CallExtensions): string[] {
    return hintsDroppedOf({ body, extensions });
  }

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const plan = this.plan(call, false);
    const response = await this.http.send(await this.http.request('/v1/messages', this.http.headers, plan.body, call));
    const message = parseResponse(parseJsonOrNull(await this.http.readText(response, call.signal)));
    if (message === null) throw malformedResponse(this.http.provider, 'message body does not match the Messages API');
    return toChatCompletion(message, plan.structuredOutputTool, nowSeconds(), this.http.provider);
  }

  async stream(call: ChatCall): Promise<ChatStream> {
    const plan = this.plan(call, true);
    const frames = new AnthropicChatFrames({ provider: this.http.provider, structuredOutputTool: plan.structuredOutputTool, created: nowSeconds() });
    return startSseStream(this.http.options.http, await this.http.request('/v1/messages', this.http.headers, plan.body, call), {
      frames,
      failure: (status, headers, text) => this.http.failure(status, headers, text),
    });
  }

  /** count_tokens of the call as a Messages request: the members that endpoint takes. */
  async countTokens(call: ChatCall): Promise<number> {
    const body = fromCallerInput(() => {
      const { model, messages, system, tools, tool_choice, thinking } = toAnthropicRequest(call.upstreamModel, call, false, this.http.provider).request as unknown as Record<string, unknown>;
      return JSON.stringify({ model, messages, system, tools, tool_choice, thinking });
    });
    const response = await this.http.send(await this.http.request('/v1/messages/count_tokens', this.http.headers, body, call));
    return inputTokensOf(this.http.provider, parseJsonOrNull(await this.http.readText(response, call.signal)));
  }

  /** The Messages API request for the call, and its JSON. */
  private plan(call: ChatCall, stream: boolean): { body: string; structuredOutputTool: string | null } {
    return fromCallerInput(() => {
      const plan = toAnthropicRequest(call.upstreamModel, call, stream, this.http.provider);
      return { body: JSON.stringify(plan.request), structuredOutputTool: plan.structuredOutputTool };
    });
  }
}

function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
