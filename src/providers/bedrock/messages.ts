import { AnthropicMessagesFrames, anthropicUsageOf, claudeMessagesJson, parseAnthropicMessage } from '../anthropic/index.js';
import type { StreamFrames } from '../shared/sse-stream.js';
import type { EventStream, JsonObject, MessagesCall, MessagesProvider, MessagesResult, MessagesStreamEvent } from '../../model-api/index.js';
import { malformedResponse } from './converse-response.js';
import { payloadOf, streamException } from './converse-stream.js';
import type { AwsEventMessage } from './event-stream.js';
import type { BedrockHttp } from './http.js';

/** The `anthropic_version` Claude on Bedrock takes in the body (its Messages API has no version header). */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Whether a Bedrock model id is Claude's (a base id, an inference profile, or an ARN naming one). */
export function isClaude(modelId: string): boolean {
  return /(^|[.:/])anthropic\.claude/.test(modelId);
}

/**
 * Claude on Bedrock for callers of Anthropic's Messages API, through InvokeModel: their body as
 * they sent it (less the reasoning other vendors signed, as for Anthropic), without `model` and
 * `stream` (the id is in the path), with `anthropic_version` and their `anthropic-beta` header
 * as the body's `anthropic_beta`. The stream's events are
 * Anthropic's own JSON in base64 `chunk` events, read by the Anthropic adapter's own frames.
 */
export class BedrockMessages implements MessagesProvider {
  constructor(
    private readonly http: BedrockHttp,
    private readonly modelIdOf: (upstreamId: string) => string,
  ) {}

  servesModel(upstreamModel: string): boolean {
    return isClaude(upstreamModel);
  }

  async create(call: MessagesCall): Promise<MessagesResult> {
    const response = await this.http.post(this.modelIdOf(call.upstreamModel), 'invoke', this.body(call), call);
    let value: unknown;
    try {
      value = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw malformedResponse(this.http.provider, 'response body is not JSON');
    }
    const message = parseAnthropicMessage(value);
    if (message === null) throw malformedResponse(this.http.provider, 'message body does not match the Messages API');
    // Claude on Bedrock names no model in its answer: the caller's SDK reads `model`.
    return { message: { ...(value as JsonObject), model: (value as JsonObject).model ?? call.upstreamModel }, usage: anthropicUsageOf(message.usage) };
  }

  stream(call: MessagesCall): Promise<EventStream<MessagesStreamEvent>> {
    return this.http.stream(this.modelIdOf(call.upstreamModel), 'invoke-with-response-stream', this.body(call), call, new ChunkFrames(this.http.provider));
  }

  async countTokens(call: MessagesCall): Promise<number> {
    // Bedrock's CountTokens takes the InvokeModel body, base64, under input.invokeModel.
    const body = JSON.stringify({ input: { invokeModel: { body: Buffer.from(this.body(call)).toString('base64') } } });
    const response = await this.http.post(this.modelIdOf(call.upstreamModel), 'count-tokens', body, call);
    const count = (JSON.parse(response.body.toString('utf8')) as { inputTokens?: unknown }).inputTokens;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw malformedResponse(this.http.provider, 'count-tokens body has no inputTokens');
    return count;
  }

  private body(call: MessagesCall): string {
    const beta = call.beta === undefined ? {} : { anthropic_beta: call.beta.split(',').map((name) => name.trim()).filter((name) => name.length > 0) };
    const set = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...beta };
    // Bedrock has `model` in the path and `stream` in the operation, and refuses either in the body.
    return claudeMessagesJson(call, this.http.provider, set, ['model', 'stream']).toString('utf8');
  }
}

/** InvokeModelWithResponseStream's `chunk` events: `{"bytes": "<base64 of one Anthropic stream event>"}`. */
class ChunkFrames implements StreamFrames<MessagesStreamEvent, AwsEventMessage> {
  private readonly anthropic: AnthropicMessagesFrames;

  constructor(private readonly provider: string) {
    this.anthropic = new AnthropicMessagesFrames(provider);
  }

  read(message: AwsEventMessage, events: MessagesStreamEvent[]): boolean {
    if (message.messageType !== 'event') throw streamException(this.provider, message);
    if (message.eventType !== 'chunk') return false;
    const bytes = payloadOf(this.provider, message).bytes;
    if (typeof bytes !== 'string') throw malformedResponse(this.provider, 'chunk event without bytes');
    const data = Buffer.from(bytes, 'base64').toString('utf8');
    const type = /"type"\s*:\s*"([a-z_]+)"/.exec(data)?.[1];
    return this.anthropic.read({ event: type, data, id: undefined }, events);
  }

  endedEarly() {
    return this.anthropic.endedEarly();
  }

  beforeFailure(events: MessagesStreamEvent[]): void {
    this.anthropic.beforeFailure(events);
  }
}
