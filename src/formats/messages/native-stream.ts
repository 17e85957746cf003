import type { GatewayError } from '../../errors/index.js';
import type { JsonObject, MessagesEventReceived, TokenUsage, UsageReported } from '../../model-api/index.js';
import { chatUsageOf, TextRoom } from '../chat-transcript.js';
import type { StreamEncoder, StreamEncoderOptions } from '../types.js';
import { errorFrame } from './errors.js';

interface TranscriptBlock {
  type: string;
  /** text, thinking, or a tool's input JSON as it streamed. */
  text: string;
  id?: string;
  name?: string;
}

/** The most content blocks a transcript follows. */
const MAX_TRANSCRIPT_BLOCKS = 128;

/**
 * A native Messages stream passed through: each event as the provider sent it (`event:` and
 * `data:`), only message_start's model replaced by the one the caller asked for, so thinking
 * blocks, signatures and event types the gateway does not know arrive unchanged. The
 * transcript for the request log keeps each block's text, thinking or tool input (bounded, as
 * the chat transcript) and the stop reason.
 */
export class NativeMessagesStreamEncoder implements StreamEncoder<MessagesEventReceived> {
  private readonly blocks = new Map<number, TranscriptBlock>();
  private stopReason: unknown = null;
  private readonly room: TextRoom;

  constructor(
    private readonly model: string,
    options: StreamEncoderOptions,
  ) {
    this.room = new TextRoom(options.transcriptCharacters);
  }

  encode(event: MessagesEventReceived): string {
    const { value } = event;
    this.note(value);
    let data = event.data;
    if (value.type === 'message_start' && typeof value.message === 'object' && value.message !== null) {
      (value.message as JsonObject).model = this.model;
      data = JSON.stringify(value);
    } else if (data.includes('\n') || data.includes('\r')) {
      // A line break would end the event early (the parser joins multi-line data with one).
      data = JSON.stringify(value);
    }
    return `event: ${event.event}\ndata: ${data}\n\n`;
  }

  usage(_event: UsageReported): string {
    return '';
  }

  /** The provider's message_stop went through as it came: nothing is owed. */
  end(_usage: TokenUsage | null): string {
    return '';
  }

  fail(error: GatewayError, requestId: string): string {
    return errorFrame(error, requestId);
  }

  transcript(usage: TokenUsage | null, complete: boolean): JsonObject {
    return {
      object: 'message.stream',
      content: [...this.blocks.values()],
      stop_reason: this.stopReason,
      usage: usage === null ? null : chatUsageOf(usage),
      complete,
      ...this.room.notKeptMember(),
    };
  }

  private note(value: JsonObject): void {
    const index = typeof value.index === 'number' ? value.index : -1;
    if (value.type === 'content_block_start' && this.blocks.size < MAX_TRANSCRIPT_BLOCKS) {
      const block = (value.content_block ?? {}) as JsonObject;
      this.blocks.set(index, {
        type: String(block.type),
        text: this.room.kept(typeof block.text === 'string' ? block.text : ''),
        ...(typeof block.id === 'string' ? { id: block.id } : {}),
        ...(typeof block.name === 'string' ? { name: block.name } : {}),
      });
    } else if (value.type === 'content_block_delta') {
      const delta = (value.delta ?? {}) as JsonObject;
      const piece = [delta.text, delta.thinking, delta.partial_json].find((part): part is string => typeof part === 'string') ?? '';
      const block = this.blocks.get(index);
      if (block === undefined) this.room.notKept += piece.length;
      else block.text += this.room.kept(piece);
    } else if (value.type === 'message_delta') {
      this.stopReason = (value.delta as JsonObject | undefined)?.stop_reason ?? null;
    }
  }
}
