import type { GatewayError } from '../../errors/index.js';
import type { ContentFrameReceived, JsonObject, TokenUsage, UsageReported } from '../../model-api/index.js';
import { memberEdits, rewriteObjectText, type MemberEdits } from '../../json/index.js';
import { chatUsageOf, TextRoom } from '../chat-transcript.js';
import type { StreamEncoder, StreamEncoderOptions } from '../types.js';
import { geminiErrorBody } from './errors.js';
import { StreamFraming } from './framing.js';

/** The most function calls a transcript follows. */
const MAX_TRANSCRIPT_CALLS = 128;

/**
 * A stream of a provider that speaks the Gemini API, passed through: each
 * GenerateContentResponse as the provider sent it (its text, only `modelVersion` replaced by
 * the model the caller named, in place), framed as
 * the caller asked (events or the JSON array). The transcript for the request log keeps the
 * answer's text, thoughts and function calls (bounded, as the chat transcript) and the finish
 * reason.
 */
export class NativeGeminiStreamEncoder implements StreamEncoder<ContentFrameReceived> {
  private readonly framing: StreamFraming;
  readonly contentType: string;
  private readonly room: TextRoom;
  private text = '';
  private thoughts = '';
  private readonly calls: JsonObject[] = [];
  private finishReason: unknown = null;

  private readonly edits: MemberEdits;

  constructor(
    private readonly model: string,
    sse: boolean,
    options: StreamEncoderOptions,
  ) {
    this.edits = memberEdits({ modelVersion: model }, []);
    this.framing = new StreamFraming(sse);
    this.contentType = this.framing.contentType;
    this.room = new TextRoom(options.transcriptCharacters);
  }

  encode(event: ContentFrameReceived): string {
    this.note(event.value);
    let data = event.data;
    if (event.value.modelVersion !== undefined && event.value.modelVersion !== this.model) {
      data = rewriteObjectText(data, this.edits) ?? JSON.stringify({ ...event.value, modelVersion: this.model });
    }
    // A line break would end the event early (the parser joins multi-line data with one).
    if (this.framing.sse && (data.includes('\n') || data.includes('\r'))) data = JSON.stringify({ ...event.value, modelVersion: event.value.modelVersion === undefined ? undefined : this.model });
    return this.framing.frame(data);
  }

  usage(_event: UsageReported): string {
    return '';
  }

  end(_usage: TokenUsage | null): string {
    return this.framing.close();
  }

  fail(error: GatewayError, requestId: string): string {
    return this.framing.frame(JSON.stringify(geminiErrorBody(error, requestId))) + this.framing.close();
  }

  transcript(usage: TokenUsage | null, complete: boolean): JsonObject {
    return {
      object: 'generate_content.stream',
      text: this.text,
      ...(this.thoughts.length > 0 ? { thoughts: this.thoughts } : {}),
      ...(this.calls.length > 0 ? { function_calls: this.calls } : {}),
      finish_reason: this.finishReason,
      usage: usage === null ? null : chatUsageOf(usage),
      complete,
      ...this.room.notKeptMember(),
    };
  }

  private note(value: JsonObject): void {
    const candidate = (Array.isArray(value.candidates) ? value.candidates[0] : undefined) as { content?: { parts?: unknown }; finishReason?: unknown } | undefined;
    if (candidate === undefined) return;
    if (candidate.finishReason !== undefined) this.finishReason = candidate.finishReason;
    const parts = Array.isArray(candidate.content?.parts) ? (candidate.content.parts as JsonObject[]) : [];
    for (const part of parts) {
      if (typeof part.text === 'string') {
        if (part.thought === true) this.thoughts += this.room.kept(part.text);
        else this.text += this.room.kept(part.text);
      } else if (typeof part.functionCall === 'object' && part.functionCall !== null && this.calls.length < MAX_TRANSCRIPT_CALLS) {
        const call = part.functionCall as JsonObject;
        this.calls.push({ name: call.name, args: this.room.kept(JSON.stringify(call.args ?? {})) });
      }
    }
  }
}
