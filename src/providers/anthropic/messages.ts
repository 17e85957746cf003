import type { EventSourceMessage } from 'eventsource-parser';
import type { GatewayError } from '../../errors/index.js';
import { patchJsonObject } from '../shared/json-members.js';
import { isRecord } from '../shared/message-content.js';
import { ownSignature } from '../shared/signatures.js';
import { startSseStream, type StreamFrames } from '../shared/sse-stream.js';
import type { UpstreamRequest } from '../shared/upstream-http.js';
import type { EventStream, JsonObject, MessagesCall, MessagesProvider, MessagesResult, MessagesStreamEvent } from '../../model-api/index.js';
import { malformedResponse, streamEndedEarly, streamErrorEvent } from './errors.js';
import type { AnthropicHttp } from './http.js';
import { combineUsage, tokenUsageOf } from './response-mapping.js';
import { parseErrorBody, parseResponse, type AnthropicUsage } from './wire.js';

/**
 * Anthropic's Messages API for callers of that API: their request goes to /v1/messages (or
 * /v1/messages/count_tokens) as they sent it, with only `model` replaced by the upstream id
 * (and the reasoning other vendors signed left out) and their `anthropic-version` and
 * `anthropic-beta` headers; the answer comes back as Anthropic sent it, with the usage read
 * from it for the log and the limits.
 */
export class AnthropicMessages implements MessagesProvider {
  constructor(private readonly http: AnthropicHttp) {}

  async create(call: MessagesCall): Promise<MessagesResult> {
    const response = await this.http.send(await this.request(call, '/v1/messages'));
    const message = parseResponse(this.parse(await this.http.readText(response, call.signal)));
    if (message === null) throw malformedResponse(this.http.provider, 'message body does not match the Messages API');
    return { message: message as unknown as JsonObject, usage: tokenUsageOf(message.usage) };
  }

  async stream(call: MessagesCall): Promise<EventStream<MessagesStreamEvent>> {
    return startSseStream(this.http.options.http, await this.request(call, '/v1/messages'), {
      frames: new NativeFrames(this.http.provider),
      failure: (status, headers, text) => this.http.failure(status, headers, text),
    });
  }

  async countTokens(call: MessagesCall): Promise<number> {
    const response = await this.http.send(await this.request(call, '/v1/messages/count_tokens'));
    return inputTokensOf(this.http.provider, this.parse(await this.http.readText(response, call.signal)));
  }

  private request(call: MessagesCall, path: string): Promise<UpstreamRequest> {
    const body = claudeMessagesJson(call, this.http.provider, { model: call.upstreamModel }, []);
    const headers = { ...this.http.headers };
    if (call.version !== undefined) headers['anthropic-version'] = call.version;
    if (call.beta !== undefined) headers['anthropic-beta'] = call.beta;
    return this.http.request(path, headers, body, call);
  }

  private parse(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw malformedResponse(this.http.provider, 'response body is not JSON');
    }
  }
}

/**
 * The JSON a provider of Claude's Messages API (Anthropic, or a cloud that serves Claude) sends
 * for a call: the caller's body with `set` on top and `remove` left out, its conversation without
 * the reasoning other vendors signed. The caller's bytes are patched when nothing else changes.
 */
export function claudeMessagesJson(call: MessagesCall, provider: string, set: JsonObject, remove: readonly string[]): Buffer {
  const messages = withOwnSignatures(call.body.messages, provider);
  if (call.sourceJson !== undefined && messages === undefined) return patchJsonObject(call.sourceJson, set, remove);
  const body: JsonObject = { ...call.body, ...set, ...(messages === undefined ? {} : { messages }) };
  for (const name of remove) delete body[name];
  return Buffer.from(JSON.stringify(body));
}

/**
 * The conversation with the reasoning other vendors signed taken out, or undefined when it
 * holds none (the common case: the body goes as sent). A thinking block signed through the
 * gateway carries `<provider>:<signature>` (src/providers/shared/signatures.ts) — a colon no
 * Anthropic signature (base64) has: this provider's own gets its signature back, another's
 * block is left out, as a translated turn's would be (Anthropic refuses a signature not its own).
 */
function withOwnSignatures(messages: unknown, provider: string): unknown[] | undefined {
  if (!Array.isArray(messages)) return undefined;
  const signed = (block: unknown): block is { type: string; signature: string } =>
    isRecord(block) && (block.type === 'thinking' || block.type === 'redacted_thinking') && typeof block.signature === 'string' && block.signature.includes(':');
  if (!messages.some((message) => isRecord(message) && message.role === 'assistant' && Array.isArray(message.content) && message.content.some(signed))) return undefined;
  return messages.map((message) => {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.content)) return message;
    const content = message.content.flatMap((block: unknown) => {
      if (!signed(block)) return [block];
      const own = ownSignature(block.signature, provider);
      return own === null ? [] : [{ ...block, signature: own }];
    });
    return { ...message, content };
  });
}

/** The count of a count_tokens answer, or the provider_error of a body that has none. */
export function inputTokensOf(provider: string, body: unknown): number {
  const count = (body as { input_tokens?: unknown } | null)?.input_tokens;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw malformedResponse(provider, 'count_tokens body has no input_tokens');
  return count;
}

/**
 * The native stream's events as they came, each parsed once, and the usage of message_start
 * and message_delta combined (message_delta's counts are cumulative). An `event: error` frame
 * fails the stream as in the chat mapping; event types Anthropic adds later pass through.
 * Also read by the clouds that serve Claude's Messages API (their events carry the same JSON).
 */
export class NativeFrames implements StreamFrames<MessagesStreamEvent> {
  private startUsage: AnthropicUsage | undefined;
  private usageReported = false;

  constructor(private readonly provider: string) {}

  read(message: EventSourceMessage, events: MessagesStreamEvent[]): boolean {
    let value: unknown;
    try {
      value = JSON.parse(message.data);
    } catch {
      throw malformedResponse(this.provider, 'stream event data is not JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as JsonObject).type !== 'string') {
      throw malformedResponse(this.provider, `malformed ${message.event ?? 'unnamed'} stream event`);
    }
    const event = value as JsonObject & { type: string };
    if (event.type === 'error') {
      const body = parseErrorBody(event);
      throw body === null ? malformedResponse(this.provider, 'malformed error stream event') : streamErrorEvent(this.provider, body);
    }
    events.push({ type: 'messages-event-received', event: message.event ?? event.type, data: message.data, value: event });
    if (event.type === 'message_start') {
      this.startUsage = (event.message as { usage?: AnthropicUsage } | undefined)?.usage;
    } else if (event.type === 'message_delta') {
      const usage = tokenUsageOf(combineUsage(this.startUsage, event.usage as AnthropicUsage | undefined));
      if (usage !== null) {
        this.usageReported = true;
        events.push({ type: 'usage-reported', usage });
      }
    }
    return event.type === 'message_stop';
  }

  endedEarly(): GatewayError {
    return streamEndedEarly(this.provider);
  }

  beforeFailure(events: MessagesStreamEvent[]): void {
    const usage = this.usageReported ? null : tokenUsageOf(this.startUsage);
    if (usage !== null) events.push({ type: 'usage-reported', usage });
  }
}
