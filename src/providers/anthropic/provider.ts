import { fromCallerInput } from '../shared/provider-json.js';
import { startSseStream } from '../shared/sse-stream.js';
import { ERROR_BODY_LIMIT_BYTES, isAnswerStatus, readBodyText, sendUpstream, transportError, type UpstreamHttpOptions, type UpstreamRequest, type UpstreamResponse } from '../shared/upstream-http.js';
import type { ChatCall, ChatCompletionResult, ChatModelProvider, ChatStream, Provider } from '../types.js';
import { malformedResponse, upstreamError } from './errors.js';
import { toAnthropicRequest } from './request-mapping.js';
import { toChatCompletion } from './response-mapping.js';
import { AnthropicChatFrames } from './stream-mapping.js';
import { ANTHROPIC_VERSION, parseResponse } from './wire.js';

export interface AnthropicProviderOptions {
  name: string;
  /** Without the version path, as Anthropic's SDKs take it (https://api.anthropic.com). */
  baseUrl: string;
  apiKey?: string;
  http: UpstreamHttpOptions;
}

/**
 * Anthropic through its native Messages API. Chat only: Anthropic offers no embeddings,
 * images, speech or transcription, so those capabilities stay undefined.
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  return { name: options.name, acceptsRemoteImageUrls: true, chat: new AnthropicChat(options) };
}

class AnthropicChat implements ChatModelProvider {
  private readonly url: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: AnthropicProviderOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/v1/messages`;
    this.headers = {
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      ...(options.apiKey !== undefined ? { 'x-api-key': options.apiKey } : {}),
    };
  }

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const plan = this.plan(call, false);
    const response = await this.send(plan.body, call);
    const message = parseResponse(parseJsonOrNull(await this.readText(response, call)));
    if (message === null) throw malformedResponse(this.options.name, 'message body does not match the Messages API');
    return toChatCompletion(message, plan.structuredOutputTool, nowSeconds());
  }

  stream(call: ChatCall): Promise<ChatStream> {
    const plan = this.plan(call, true);
    const frames = new AnthropicChatFrames({ provider: this.options.name, structuredOutputTool: plan.structuredOutputTool, created: nowSeconds() });
    return startSseStream(this.options.http, this.upstreamRequest(plan.body, call), {
      frames,
      failure: (status, headers, text) => upstreamError(this.options.name, { status, headers }, text),
    });
  }

  /** The Messages API request for the call, and its JSON. */
  private plan(call: ChatCall, stream: boolean): { body: string; structuredOutputTool: string | null } {
    return fromCallerInput(() => {
      const plan = toAnthropicRequest(call.upstreamModel, call.body, stream);
      return { body: JSON.stringify(plan.request), structuredOutputTool: plan.structuredOutputTool };
    });
  }

  private upstreamRequest(body: string, call: ChatCall): UpstreamRequest {
    // Anthropic names its id for the call in `request-id`; it documents no header for a client's own id, so none is sent.
    return { url: this.url, headers: this.headers, body, signal: call.signal, provider: this.options.name, ids: { requestId: call.requestId, providerHeader: 'request-id' } };
  }

  /** POSTs the request; an error status becomes the mapped GatewayError. */
  private async send(body: string, call: ChatCall): Promise<UpstreamResponse> {
    const response = await sendUpstream(this.options.http, this.upstreamRequest(body, call));
    if (isAnswerStatus(response.status)) return response;
    const text = await readBodyText(response.body, ERROR_BODY_LIMIT_BYTES).catch(() => '');
    throw upstreamError(this.options.name, response, text);
  }

  /** The whole body; a timeout or reset while reading it is a transport failure. */
  private async readText(response: UpstreamResponse, call: ChatCall): Promise<string> {
    try {
      return await readBodyText(response.body);
    } catch (error) {
      throw transportError(error, this.options.name, call.signal);
    }
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
