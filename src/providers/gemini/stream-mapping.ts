import type { ChatStreamEvent, JsonObject, TokenUsage } from '../../model-api/index.js';
import { finishReasonOf } from './finish-reasons.js';
import { answerText, completionId, openAiUsage, thoughtText, toolCallsOf, turnSignatureOf, usageOf } from './response-mapping.js';
import type { GenerateContentResponse } from './wire.js';

interface CandidateState {
  roleSent: boolean;
  toolCalls: number;
  /** Answer text was sent. */
  hasContent: boolean;
  finished: boolean;
  /** The turn's thought signature was sent. */
  signed: boolean;
}

type UsageReported = Extract<ChatStreamEvent, { type: 'usage-reported' }>;

/**
 * Turns the frames of streamGenerateContent (each a whole GenerateContentResponse holding the
 * next piece of every candidate) into OpenAI `chat.completion.chunk` events. Gemini sends
 * cumulative usageMetadata on the frames; each change is reported, so the latest one counts,
 * with its usage chunk, so a caller that asked for usage sees the thinking tokens
 * (`completion_tokens_details.reasoning_tokens`) as it does without streaming. A candidate
 * that ends without an answer (finish-reasons.ts) throws, which fails the stream; the usage
 * of that frame is still owed (`unreportedUsage`).
 */
export class GeminiStreamMapper {
  private id: string | undefined;
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly candidates = new Map<number, CandidateState>();
  private lastUsage: TokenUsage | null = null;
  /** The usage of the frame being mapped, until its events are handed on. */
  private pendingUsage: UsageReported | null = null;

  constructor(
    private readonly upstreamModel: string,
    private readonly provider: string,
  ) {}

  map(frame: GenerateContentResponse): ChatStreamEvent[] {
    this.id ??= completionId(frame);
    // Usage before the frame's chunks: Gemini counts the prompt from the first frame on, and
    // the formats show it in their first event (message_start, response.created).
    const events: ChatStreamEvent[] = [];
    this.pendingUsage = this.usageEvent(frame);
    if (this.pendingUsage !== null) events.push(this.pendingUsage);
    const frameCandidates = frame.candidates ?? [];
    if (frameCandidates.length === 0 && frame.promptFeedback?.blockReason !== undefined) {
      // A blocked prompt: no candidates, only the block reason (first frame only).
      this.candidates.set(0, { roleSent: true, toolCalls: 0, hasContent: false, finished: true, signed: false });
      events.push(this.chunk(0, { role: 'assistant', content: '' }, 'content_filter'));
    }
    frameCandidates.forEach((candidate, position) => {
      const index = candidate.index ?? position;
      const state = this.candidates.get(index) ?? { roleSent: false, toolCalls: 0, hasContent: false, finished: false, signed: false };
      this.candidates.set(index, state);
      const parts = candidate.content?.parts ?? [];
      const delta: JsonObject = {};
      if (!state.roleSent) delta.role = 'assistant';
      const thoughts = thoughtText(parts);
      if (thoughts.length > 0) delta.reasoning_content = thoughts;
      // One signature a turn: the first part's that has one (see turnSignatureOf).
      const signature = state.signed ? null : turnSignatureOf(parts, this.provider);
      if (signature !== null) {
        delta.reasoning_signature = signature;
        state.signed = true;
      }
      const text = answerText(parts);
      if (text.length > 0) delta.content = text;
      const toolCalls = toolCallsOf(parts).map((call) => ({ index: state.toolCalls++, ...call }));
      if (toolCalls.length > 0) delta.tool_calls = toolCalls;
      state.hasContent ||= text.length > 0;
      // FINISH_REASON_UNSPECIFIED is the enum's default: no reason yet.
      const reason = candidate.finishReason === 'FINISH_REASON_UNSPECIFIED' ? undefined : candidate.finishReason;
      const finishReason = finishReasonOf(reason, { calledTools: state.toolCalls > 0, hasContent: state.hasContent }, this.provider);
      if (Object.keys(delta).length === 0 && finishReason === null) return;
      state.roleSent = true;
      state.finished ||= finishReason !== null;
      events.push(this.chunk(index, delta, finishReason));
    });
    this.pendingUsage = null;
    return events;
  }

  /** The usage of a frame that failed the stream, when it changed: still counted. */
  unreportedUsage(): UsageReported | null {
    const usage = this.pendingUsage;
    this.pendingUsage = null;
    return usage;
  }

  /** The usage event of a frame whose usage changed; null when it did not. */
  private usageEvent(frame: GenerateContentResponse): UsageReported | null {
    const usage = usageOf(frame.usageMetadata);
    if (usage === null || (this.lastUsage !== null && sameUsage(usage, this.lastUsage))) return null;
    this.lastUsage = usage;
    const chunk = this.chunkOf([]);
    chunk.usage = openAiUsage(usage, frame.usageMetadata);
    return { type: 'usage-reported', usage, chunk };
  }

  /** Whether every candidate that started got its finishReason: Gemini's only end-of-stream marker. */
  isComplete(): boolean {
    return this.candidates.size > 0 && [...this.candidates.values()].every((state) => state.finished);
  }

  private chunk(index: number, delta: JsonObject, finishReason: string | null): ChatStreamEvent {
    return { type: 'chunk-received', chunk: this.chunkOf([{ index, delta, finish_reason: finishReason, logprobs: null }]) };
  }

  /** A `chat.completion.chunk`, written out (an object literal with a spread in it takes V8's slow path). */
  private chunkOf(choices: JsonObject[]): JsonObject {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.upstreamModel, choices };
  }
}

/** Whether two counts of `usageOf` are the same (compared member by member: every frame carries one). */
function sameUsage(a: TokenUsage, b: TokenUsage): boolean {
  return a.promptTokens === b.promptTokens && a.completionTokens === b.completionTokens && a.totalTokens === b.totalTokens && a.cachedPromptTokens === b.cachedPromptTokens;
}
