import type { EventSourceMessage } from 'eventsource-parser';
import type { GatewayError } from '../../errors/index.js';
import type { ChatFrames } from '../shared/sse-stream.js';
import type { ChatStreamEvent, JsonObject } from '../../model-api/index.js';
import { malformedResponse, streamEndedEarly, streamErrorEvent } from './errors.js';
import { combineUsage, finishReasonOf, openAiUsage, tokenUsageOf, type FinishReason } from './response-mapping.js';
import { parseStreamEvent, type AnthropicStreamEvent, type AnthropicUsage } from './wire.js';
import { signatureOf } from '../shared/signatures.js';

export interface StreamMappingOptions {
  provider: string;
  structuredOutputTool: string | null;
  created: number;
}

/**
 * Anthropic stream events, validated, as OpenAI `chat.completion.chunk`s: the role chunk on
 * message_start, text and tool-argument deltas as they come, the finish reason and one usage
 * report (message_start and message_delta counts combined, with its OpenAI usage chunk so
 * cached tokens reach a caller that asked for usage) on message_delta. An `event: error`
 * frame, a malformed frame and a body that ends without `message_stop` fail the stream; a
 * failure after the first event reports the usage known so far first, if message_delta never
 * came.
 */
export class AnthropicChatFrames implements ChatFrames {
  private readonly mapper: StreamMapper;

  constructor(private readonly options: StreamMappingOptions) {
    this.mapper = new StreamMapper(options);
  }

  read(message: EventSourceMessage, events: ChatStreamEvent[]): boolean {
    const parsed = parseStreamEvent(parseJson(message.data, this.options.provider));
    if (parsed.kind === 'malformed') throw malformedResponse(this.options.provider, `malformed ${message.event ?? 'unnamed'} stream event`);
    if (parsed.kind === 'unknown' || parsed.event.type === 'ping') return false;
    if (parsed.event.type === 'error') throw streamErrorEvent(this.options.provider, parsed.event);
    this.mapper.map(parsed.event, events);
    return parsed.event.type === 'message_stop';
  }

  endedEarly(): GatewayError {
    return streamEndedEarly(this.options.provider);
  }

  beforeFailure(events: ChatStreamEvent[]): void {
    const usage = this.mapper.unreportedUsage();
    if (usage !== null) events.push({ type: 'usage-reported', usage });
  }
}

function parseJson(data: string, provider: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw malformedResponse(provider, 'stream event data is not JSON');
  }
}

class StreamMapper {
  private id = '';
  private model = '';
  private startUsage: AnthropicUsage | undefined;
  private usageReported = false;
  /** OpenAI tool_calls index of each tool_use content block, by Anthropic block index. */
  private readonly toolCallIndexes = new Map<number, number>();
  /** Content block index of the forced response_format tool, whose input streams as content. */
  private structuredBlockIndex: number | null = null;
  /** tool_use blocks (by Anthropic block index) whose input has not streamed a character yet. */
  private readonly blocksWithoutInput = new Set<number>();

  constructor(private readonly options: StreamMappingOptions) {}

  /** Pushes the chat events of one Anthropic event onto `events` (no generator per event: this runs for every token). */
  map(event: AnthropicStreamEvent, events: ChatStreamEvent[]): void {
    switch (event.type) {
      case 'message_start':
        this.id = event.message.id;
        this.model = event.message.model;
        this.startUsage = event.message.usage;
        {
          // The prompt's count comes first: the formats show it in their first event (message_start, response.created).
          const usage = tokenUsageOf(this.startUsage);
          if (usage !== null) events.push({ type: 'usage-reported', usage });
        }
        events.push(this.chunk({ role: 'assistant', content: '' }));
        return;
      case 'content_block_start':
        this.blockStarted(event.index, event.content_block, events);
        return;
      case 'content_block_delta':
        this.blockDelta(event.index, event.delta, events);
        return;
      case 'content_block_stop':
        this.blockStopped(event.index, events);
        return;
      case 'message_delta': {
        events.push(this.chunk({}, finishReasonOf(event.delta.stop_reason, this.structuredBlockIndex !== null)));
        const usage = tokenUsageOf(combineUsage(this.startUsage, event.usage));
        if (usage !== null) {
          this.usageReported = true;
          events.push({ type: 'usage-reported', usage, chunk: this.chunkOf([], openAiUsage(usage)) });
        }
        return;
      }
      default:
        return;
    }
  }

  unreportedUsage() {
    return this.usageReported ? null : tokenUsageOf(this.startUsage);
  }

  private blockStarted(index: number, block: { type: string; text?: string; id?: string; name?: string }, events: ChatStreamEvent[]): void {
    if (block.type === 'text' && block.text !== undefined && block.text.length > 0) events.push(this.chunk({ content: block.text }));
    if (block.type !== 'tool_use') return;
    this.blocksWithoutInput.add(index);
    if (block.name === this.options.structuredOutputTool) {
      this.structuredBlockIndex = index;
      return;
    }
    const toolCallIndex = this.toolCallIndexes.size;
    this.toolCallIndexes.set(index, toolCallIndex);
    events.push(this.chunk({ tool_calls: [{ index: toolCallIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] }));
  }

  private blockDelta(index: number, delta: { type: string; text?: string; partial_json?: string; thinking?: string; signature?: string }, events: ChatStreamEvent[]): void {
    if (delta.type === 'text_delta' && delta.text !== undefined) events.push(this.chunk({ content: delta.text }));
    if (delta.type === 'thinking_delta' && delta.thinking !== undefined && delta.thinking.length > 0) events.push(this.chunk({ reasoning_content: delta.thinking }));
    if (delta.type === 'signature_delta' && delta.signature !== undefined && delta.signature.length > 0) {
      events.push(this.chunk({ reasoning_signature: signatureOf(this.options.provider, delta.signature) }));
    }
    if (delta.type !== 'input_json_delta' || delta.partial_json === undefined || delta.partial_json.length === 0) return;
    this.blocksWithoutInput.delete(index);
    this.inputText(index, delta.partial_json, events);
  }

  /**
   * A tool called without arguments streams no input text at all (only an empty
   * input_json_delta): its input is {}, as in the answer without streaming, and clients parse
   * the arguments they assembled, so "{}" is sent when the block ends.
   */
  private blockStopped(index: number, events: ChatStreamEvent[]): void {
    if (!this.blocksWithoutInput.delete(index)) return;
    this.inputText(index, '{}', events);
  }

  private inputText(index: number, json: string, events: ChatStreamEvent[]): void {
    if (index === this.structuredBlockIndex) {
      events.push(this.chunk({ content: json }));
      return;
    }
    const toolCallIndex = this.toolCallIndexes.get(index);
    if (toolCallIndex !== undefined) events.push(this.chunk({ tool_calls: [{ index: toolCallIndex, function: { arguments: json } }] }));
  }

  private chunk(delta: JsonObject, finishReason: FinishReason | null = null): ChatStreamEvent {
    return { type: 'chunk-received', chunk: this.chunkOf([{ index: 0, delta, logprobs: null, finish_reason: finishReason }]) };
  }

  /** A `chat.completion.chunk`, written out (an object literal with a spread in it takes V8's slow path). */
  private chunkOf(choices: JsonObject[], usage?: JsonObject): JsonObject {
    const chunk: JsonObject = { id: this.id, object: 'chat.completion.chunk', created: this.options.created, model: this.model, choices };
    if (usage !== undefined) chunk.usage = usage;
    return chunk;
  }
}
