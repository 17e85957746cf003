import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent, JsonObject, TokenUsage } from '../../model-api/index.js';
import type { StreamFrames } from '../shared/sse-stream.js';
import { isRecord } from '../shared/message-content.js';
import { finishReasonOf, malformedResponse, openAiUsage, tokenUsageOf } from './converse-response.js';
import type { AwsEventMessage } from './event-stream.js';

/** An exception message inside the 200 stream (`:message-type exception`), in the gateway's terms. */
export function streamException(provider: string, message: AwsEventMessage): GatewayError {
  let upstreamMessage: string | null = null;
  try {
    const body = JSON.parse(message.payload) as { message?: unknown };
    if (typeof body.message === 'string') upstreamMessage = body.message;
  } catch {
    // The exception's type says enough.
  }
  const throttled = message.exceptionType === 'throttlingException' || message.exceptionType === 'serviceUnavailableException';
  return new GatewayError('provider_error', throttled ? 'The model provider is overloaded and stopped the answer. Try again later.' : 'The model provider stopped the answer with an error. Try again later.', {
    upstream: { provider, errorType: message.exceptionType ?? message.messageType, message: upstreamMessage },
  });
}

export function streamEndedEarly(provider: string, marker: string): GatewayError {
  return new GatewayError('provider_error', 'The model provider ended the stream before the answer was complete. Try again later.', {
    logDetail: { provider, reason: `stream ended without ${marker}` },
  });
}

/** A payload's JSON object (Bedrock pads each with a `p` member, which is ignored). */
export function payloadOf(provider: string, message: AwsEventMessage): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(message.payload);
  } catch {
    throw malformedResponse(provider, `${message.eventType ?? 'unnamed'} event payload is not JSON`);
  }
  if (!isRecord(value)) throw malformedResponse(provider, `${message.eventType ?? 'unnamed'} event payload is not an object`);
  return value;
}

/**
 * ConverseStream's events (messageStart, contentBlockStart, contentBlockDelta,
 * contentBlockStop, messageStop, metadata) as OpenAI `chat.completion.chunk`s. The stream is
 * whole at `metadata`, which carries the usage and comes after messageStop.
 */
export class ConverseChatFrames implements StreamFrames<ChatStreamEvent, AwsEventMessage> {
  /** OpenAI tool_calls index of each toolUse content block, by Converse block index. */
  private readonly toolCallIndexes = new Map<number, number>();
  private finishReason: string | null = null;
  private usage: TokenUsage | null = null;

  constructor(private readonly options: { provider: string; id: string; model: string; created: number }) {}

  read(message: AwsEventMessage, events: ChatStreamEvent[]): boolean {
    if (message.messageType !== 'event') throw streamException(this.options.provider, message);
    const payload = payloadOf(this.options.provider, message);
    switch (message.eventType) {
      case 'messageStart':
        events.push(this.chunk({ role: 'assistant', content: '' }, null));
        return false;
      case 'contentBlockStart': {
        const toolUse = isRecord(payload.start) && isRecord(payload.start.toolUse) ? payload.start.toolUse : undefined;
        if (toolUse !== undefined && typeof payload.contentBlockIndex === 'number') {
          const index = this.toolCallIndexes.size;
          this.toolCallIndexes.set(payload.contentBlockIndex, index);
          events.push(this.chunk({ tool_calls: [{ index, id: toolUse.toolUseId, type: 'function', function: { name: toolUse.name, arguments: '' } }] }, null));
        }
        return false;
      }
      case 'contentBlockDelta': {
        const delta = isRecord(payload.delta) ? payload.delta : {};
        if (typeof delta.text === 'string') events.push(this.chunk({ content: delta.text }, null));
        const input = isRecord(delta.toolUse) ? delta.toolUse.input : undefined;
        const index = typeof payload.contentBlockIndex === 'number' ? this.toolCallIndexes.get(payload.contentBlockIndex) : undefined;
        if (typeof input === 'string' && index !== undefined) events.push(this.chunk({ tool_calls: [{ index, function: { arguments: input } }] }, null));
        return false;
      }
      case 'messageStop':
        this.finishReason = finishReasonOf(payload.stopReason);
        return false;
      case 'metadata': {
        this.usage = tokenUsageOf(isRecord(payload.usage) ? payload.usage : undefined);
        events.push(this.chunk({}, this.finishReason ?? 'stop'));
        if (this.usage !== null) events.push({ type: 'usage-reported', usage: this.usage, chunk: { ...this.base(), choices: [], usage: openAiUsage(this.usage) } });
        return true;
      }
      default:
        return false; // contentBlockStop, and event types Bedrock adds later
    }
  }

  endedEarly(): GatewayError {
    return streamEndedEarly(this.options.provider, 'its metadata event');
  }

  private base(): JsonObject {
    return { id: this.options.id, object: 'chat.completion.chunk', created: this.options.created, model: this.options.model };
  }

  private chunk(delta: JsonObject, finishReason: string | null): ChatStreamEvent {
    return { type: 'chunk-received', chunk: { ...this.base(), choices: [{ index: 0, delta, finish_reason: finishReason }] } };
  }
}
