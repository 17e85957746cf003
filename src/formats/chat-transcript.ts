import type { JsonObject, TokenUsage } from '../model-api/index.js';

/**
 * What the request log keeps of a stream of the internal chat call, whatever format the
 * caller reads it in: the answer text, refusals, tool calls and finish reasons, as a
 * `chat.completion.stream` payload with the usage in OpenAI's words.
 */

/** Room for a transcript's text: what fits is kept, the rest only counted. */
export class TextRoom {
  notKept = 0;

  constructor(private room: number) {}

  /** What of `text` fits the room left; the rest is counted. */
  kept(text: string): string {
    if (text.length <= this.room) {
      this.room -= text.length;
      return text;
    }
    const kept = text.slice(0, this.room);
    this.notKept += text.length - this.room;
    this.room = 0;
    return kept;
  }

  /** `characters_not_kept` for the transcript, when any were not. */
  notKeptMember(): { characters_not_kept?: number } {
    return this.notKept > 0 ? { characters_not_kept: this.notKept } : {};
  }
}

/** The most choices a transcript follows: a request may ask for 128 (`n`); and the most tool calls it follows per choice. */
const MAX_TRANSCRIPT_CHOICES = 128;

interface TranscriptToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

interface TranscriptChoice {
  content: string;
  /** The model's refusal text (OpenAI streams it in `delta.refusal`), null when it did not refuse. */
  refusal: string | null;
  finishReason: unknown;
  toolCalls: Map<number, TranscriptToolCall> | null;
}

/** A tool call's part in one chunk's delta (OpenAI sends id, type and name first, then argument pieces). */
interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  type?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

/**
 * Text, refusals, tool calls and finish reasons of a streamed answer, kept for the request log. Bounded:
 * a stream may go on far longer than the log stores (260 MB of deltas held 470 MB of heap), so
 * text past `characters` is counted, not kept.
 */
export class ChatStreamTranscript {
  private readonly choices = new Map<number, TranscriptChoice>();
  private readonly room: TextRoom;

  constructor(characters: number) {
    this.room = new TextRoom(characters);
  }

  add(chunk: JsonObject): void {
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices as ({ index?: unknown; delta?: { content?: unknown; refusal?: unknown; tool_calls?: unknown } | null; finish_reason?: unknown } | null)[]) {
      if (typeof choice !== 'object' || choice === null) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const content = choice.delta?.content;
      const refusal = choice.delta?.refusal;
      const toolCalls = choice.delta?.tool_calls;
      let entry = this.choices.get(index);
      if (entry === undefined) {
        if (this.choices.size >= MAX_TRANSCRIPT_CHOICES) {
          if (typeof content === 'string') this.room.notKept += content.length;
          continue;
        }
        this.choices.set(index, (entry = { content: '', refusal: null, finishReason: null, toolCalls: null }));
      }
      if (typeof content === 'string') entry.content += this.room.kept(content);
      if (typeof refusal === 'string' && refusal.length > 0) entry.refusal = (entry.refusal ?? '') + this.room.kept(refusal);
      if (Array.isArray(toolCalls)) this.addToolCalls(entry, toolCalls as (ToolCallDelta | null)[]);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) entry.finishReason = choice.finish_reason;
    }
  }

  private addToolCalls(entry: TranscriptChoice, deltas: (ToolCallDelta | null)[]): void {
    entry.toolCalls ??= new Map();
    for (const delta of deltas) {
      if (typeof delta !== 'object' || delta === null) continue;
      const index = typeof delta.index === 'number' ? delta.index : 0;
      let call = entry.toolCalls.get(index);
      if (call === undefined) {
        if (entry.toolCalls.size >= MAX_TRANSCRIPT_CHOICES) continue;
        entry.toolCalls.set(index, (call = { id: '', type: 'function', function: { name: '', arguments: '' } }));
      }
      if (typeof delta.id === 'string') call.id += this.room.kept(delta.id);
      if (typeof delta.type === 'string') call.type = delta.type;
      const name = delta.function?.name;
      const pieces = delta.function?.arguments;
      if (typeof name === 'string') call.function.name += this.room.kept(name);
      if (typeof pieces === 'string') call.function.arguments += this.room.kept(pieces);
    }
  }

  payload(usage: TokenUsage | null, complete: boolean): JsonObject {
    const choices = [...this.choices].map(([index, entry]) => ({
      index,
      content: entry.content,
      ...(entry.refusal !== null ? { refusal: entry.refusal } : {}),
      ...(entry.toolCalls !== null ? { tool_calls: [...entry.toolCalls.values()] } : {}),
      finish_reason: entry.finishReason,
    }));
    return {
      object: 'chat.completion.stream',
      choices,
      usage: usage === null ? null : chatUsageOf(usage),
      complete,
      ...this.room.notKeptMember(),
    };
  }
}

/** Usage in OpenAI's words (snake_case), as chunks carry it and as the request log keeps it. */
export function chatUsageOf(usage: TokenUsage): JsonObject {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedPromptTokens !== null ? { prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens } } : {}),
  };
}
