import type { GatewayError } from '../../errors/index.js';
import type { ChunkReceived, JsonObject, TokenUsage, UsageReported } from '../../model-api/index.js';
import { ChatStreamTranscript } from '../chat-transcript.js';
import type { StreamEncoder, StreamEncoderOptions } from '../types.js';
import { errorFrame } from './errors.js';
import { messagesUsageOf, stopReasonOf } from './response.js';

/** One server-sent event of the Messages API: the `event:` line names the data's type. */
export function eventFrame(type: string, data: JsonObject): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * A content_block_delta event, as eventFrame writes it: one per piece of the answer, most of a
 * stream, so it is written without building and serialising its object.
 */
function deltaFrame(index: number, delta: 'text_delta' | 'input_json_delta' | 'thinking_delta' | 'signature_delta', field: 'text' | 'partial_json' | 'thinking' | 'signature', value: string): string {
  return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"${delta}","${field}":${JSON.stringify(value)}}}\n\n`;
}

interface ChunkDelta {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  reasoning_signature?: unknown;
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } | null }[] | null;
}

type OpenBlock = { kind: 'text' } | { kind: 'thinking' } | { kind: 'tool'; toolIndex: number };

/**
 * The internal chat stream as the Messages API streams: message_start, then per content block
 * content_block_start (a ping after the first), content_block_delta (`thinking_delta` and
 * `signature_delta` for the model's reasoning, `text_delta`, `input_json_delta`) and
 * content_block_stop, then message_delta with the stop reason and the whole usage, and
 * message_stop — the order Anthropic's SDKs require. Text and tool calls become blocks in
 * the order they arrive; a block is closed when the next one starts.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private readonly transcriptOf: ChatStreamTranscript;
  private started = false;
  private open: OpenBlock | null = null;
  private blocks = 0;
  private finishReason: unknown = null;
  /** The usage the provider reported so far. */
  private reported: TokenUsage | null = null;

  constructor(
    private readonly model: string,
    private readonly options: StreamEncoderOptions,
    /** The format's own estimate of the prompt, for a provider whose count is not known in time. */
    private readonly estimate: () => number,
  ) {
    this.transcriptOf = new ChatStreamTranscript(options.transcriptCharacters);
  }

  encode(event: ChunkReceived): string {
    this.transcriptOf.add(event.chunk);
    let frames = this.start(event.chunk);
    const choice = (Array.isArray(event.chunk.choices) ? event.chunk.choices[0] : undefined) as { delta?: ChunkDelta | null; finish_reason?: unknown } | undefined;
    const delta = choice?.delta;
    if (delta !== undefined && delta !== null) {
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content.length > 0) frames += this.thinking(delta.reasoning_content);
      if (typeof delta.reasoning_signature === 'string') frames += this.signature(delta.reasoning_signature);
      for (const text of [delta.content, delta.refusal]) if (typeof text === 'string' && text.length > 0) frames += this.text(text);
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) frames += this.toolCall(call);
    }
    if (choice?.finish_reason !== undefined && choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    return frames;
  }

  usage(event: UsageReported): string {
    this.reported = event.usage;
    return '';
  }

  end(usage: TokenUsage | null): string {
    return (
      this.start(null) +
      this.closeBlock() +
      eventFrame('message_delta', { type: 'message_delta', delta: { stop_reason: stopReasonOf(this.finishReason), stop_sequence: null }, usage: messagesUsageOf(usage) }) +
      eventFrame('message_stop', { type: 'message_stop' })
    );
  }

  fail(error: GatewayError, requestId: string): string {
    return errorFrame(error, requestId);
  }

  transcript(usage: TokenUsage | null, complete: boolean): JsonObject {
    return this.transcriptOf.payload(usage, complete);
  }

  /** message_start, once, before anything else. */
  private start(chunk: JsonObject | null): string {
    if (this.started) return '';
    this.started = true;
    const id = typeof chunk?.id === 'string' ? chunk.id : '';
    return eventFrame('message_start', {
      type: 'message_start',
      message: { id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: this.startUsage() },
    });
  }

  /**
   * The prompt's count as message_start shows it (clients such as LangChain take it from there):
   * the provider's own when it reported one before its first token (Anthropic, Gemini), else the
   * local count of the provider's tokenizer, else the format's estimate; message_delta then
   * carries the provider's final count.
   */
  private startUsage(): JsonObject {
    if (this.reported !== null) return messagesUsageOf(this.reported);
    const input = this.options.promptTokens?.() ?? this.estimate();
    return { input_tokens: input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 };
  }

  /** A piece of the model's reasoning, in a thinking block (opened with an empty signature, as Anthropic's are). */
  private thinking(text: string): string {
    const opened = this.open?.kind === 'thinking' ? '' : this.openBlock({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
    return opened + deltaFrame(this.blocks - 1, 'thinking_delta', 'thinking', text);
  }

  /** The reasoning's signature: the thinking block's last delta, which closes it. */
  private signature(signature: string): string {
    const opened = this.open?.kind === 'thinking' ? '' : this.openBlock({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
    return opened + deltaFrame(this.blocks - 1, 'signature_delta', 'signature', signature) + this.closeBlock();
  }

  private text(text: string): string {
    const opened = this.open?.kind === 'text' ? '' : this.openBlock({ kind: 'text' }, { type: 'text', text: '' });
    return opened + deltaFrame(this.blocks - 1, 'text_delta', 'text', text);
  }

  private toolCall(call: NonNullable<ChunkDelta['tool_calls']>[number]): string {
    const toolIndex = typeof call.index === 'number' ? call.index : 0;
    let frames = '';
    if (this.open?.kind !== 'tool' || this.open.toolIndex !== toolIndex) {
      const name = call.function?.name;
      frames += this.openBlock({ kind: 'tool', toolIndex }, { type: 'tool_use', id: typeof call.id === 'string' ? call.id : '', name: typeof name === 'string' ? name : '', input: {} });
    }
    const pieces = call.function?.arguments;
    if (typeof pieces === 'string' && pieces.length > 0) {
      frames += deltaFrame(this.blocks - 1, 'input_json_delta', 'partial_json', pieces);
    }
    return frames;
  }

  private openBlock(block: OpenBlock, contentBlock: JsonObject): string {
    const closed = this.closeBlock();
    this.open = block;
    const index = this.blocks++;
    const ping = index === 0 ? eventFrame('ping', { type: 'ping' }) : '';
    return `${closed}${eventFrame('content_block_start', { type: 'content_block_start', index, content_block: contentBlock })}${ping}`;
  }

  private closeBlock(): string {
    if (this.open === null) return '';
    this.open = null;
    return eventFrame('content_block_stop', { type: 'content_block_stop', index: this.blocks - 1 });
  }
}
