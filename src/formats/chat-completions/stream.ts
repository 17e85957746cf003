import type { GatewayError } from '../../errors/index.js';
import { memberEdits, rewriteObjectText, type MemberEdits } from '../../json/index.js';
import { providerJsonText } from '../../providers/index.js';
import type { ChunkReceived, JsonObject, TokenUsage, UsageReported } from '../../model-api/index.js';
import { ChatStreamTranscript, chatUsageOf } from '../chat-transcript.js';
import type { StreamEncoder, StreamEncoderOptions } from '../types.js';

export interface ChatStreamSettings extends StreamEncoderOptions {
  /** The model the caller asked for: every chunk shows it. */
  requestedModel: string;
  /** `stream_options.include_usage`: the caller sees the usage chunk only when it asked. */
  includeUsage: boolean;
}

/**
 * OpenAI's server-sent events: `data: {chat.completion.chunk}` per chunk, ending with
 * `data: [DONE]`, or with one error chunk (no [DONE]) when the provider failed mid-stream:
 * OpenAI's own API and SDKs report a mid-stream failure as a `data: {"error": …}` frame,
 * which the SDKs raise as an APIError.
 */
export class ChatCompletionsStreamEncoder implements StreamEncoder {
  private readonly transcriptOf: ChatStreamTranscript;
  private template: JsonObject | null = null;
  private usageChunk: JsonObject | null = null;
  private readonly chunkEdits: MemberEdits;

  constructor(private readonly settings: ChatStreamSettings) {
    this.chunkEdits = memberEdits({ model: settings.requestedModel }, ['usage']);
    this.transcriptOf = new ChatStreamTranscript(settings.transcriptCharacters);
  }

  encode(event: ChunkReceived): string {
    this.template ??= event.chunk;
    this.transcriptOf.add(event.chunk);
    return frameOf(this.shownChunk(event));
  }

  usage(event: UsageReported): string {
    this.usageChunk = event.chunk ?? null;
    return '';
  }

  end(usage: TokenUsage | null): string {
    const usageFrame = this.settings.includeUsage && usage !== null ? frameOf(this.usageChunkJson(usage)) : '';
    return `${usageFrame}${frameOf('[DONE]')}`;
  }

  fail(error: GatewayError, requestId: string): string {
    return frameOf(JSON.stringify(error.toBody(requestId)));
  }

  transcript(usage: TokenUsage | null, complete: boolean): JsonObject {
    return this.transcriptOf.payload(usage, complete);
  }

  /**
   * The usage chunk: the provider's own with the caller's model, or one built like OpenAI's
   * when there is none, or when the provider's cannot be written again (nested too deep:
   * the stream would never end).
   */
  private usageChunkJson(usage: TokenUsage): string {
    const own = this.usageChunk === null ? null : providerJsonText({ ...this.usageChunk, model: this.settings.requestedModel });
    return own ?? JSON.stringify(builtUsageChunk(this.template, usage, this.settings.requestedModel));
  }

  /**
   * A chunk's JSON as the caller sees it: the model it asked for, no `usage`. The provider's
   * own text with those members changed when it has one (cheaper than serialising it again),
   * else the object serialised. A line break would end the server-sent event early: such text
   * (the parser joins multi-line data with one) is never sent as it is.
   */
  private shownChunk(event: ChunkReceived): string {
    if (event.json !== undefined && !event.json.includes('\n') && !event.json.includes('\r')) {
      const text = rewriteObjectText(event.json, this.chunkEdits);
      if (text !== undefined) return text;
    }
    event.chunk.model = this.settings.requestedModel;
    delete event.chunk.usage;
    return JSON.stringify(event.chunk);
  }
}

function frameOf(data: string): string {
  return `data: ${data}\n\n`;
}

/** A usage chunk built like OpenAI's (`choices: []`), with the stream's id and time when the provider's are a string and a number. */
function builtUsageChunk(template: JsonObject | null, usage: TokenUsage, model: string): JsonObject {
  return {
    id: typeof template?.id === 'string' ? template.id : null,
    object: 'chat.completion.chunk',
    created: typeof template?.created === 'number' ? template.created : Math.floor(Date.now() / 1000),
    model,
    choices: [],
    usage: chatUsageOf(usage),
  };
}
