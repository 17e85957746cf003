import type { GatewayError } from '../../errors/index.js';
import type { ChunkReceived, JsonObject, TokenUsage, UsageReported } from '../../model-api/index.js';
import { ChatStreamTranscript } from '../chat-transcript.js';
import type { StreamEncoder, StreamEncoderOptions } from '../types.js';
import { geminiErrorBody } from './errors.js';
import { StreamFraming } from './framing.js';
import { finishReasonOf, functionCallPart, reasoningTokensOf, usageMetadataOf } from './response.js';

interface ChunkDelta {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  tool_calls?: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } | null }[] | null;
}

interface ToolCallSoFar {
  id: string;
  function: { name: string; arguments: string };
}

/** What a candidate has streamed so far but not yet sent. */
interface CandidateState {
  /** The parts of its last piece, held back so the last one goes out with the finishReason. */
  held: JsonObject[];
  /** Its function calls as their arguments arrive: Gemini sends each call whole. */
  toolCalls: Map<number, ToolCallSoFar>;
  finishReason: unknown;
}

/**
 * The internal chat stream as streamGenerateContent answers: one GenerateContentResponse per
 * piece of the answer (a thought part, a text part), each function call whole once its
 * arguments are complete, the last response of each candidate with its `finishReason`, and
 * `usageMetadata` on every response once the provider reported it (the whole of it on the
 * last). A candidate's latest piece is held until the next one comes, so the last piece and the
 * finishReason are one response, as Google sends them (its clients treat a response without
 * parts as empty).
 */
export class GeminiStreamEncoder implements StreamEncoder {
  private readonly transcriptOf: ChatStreamTranscript;
  private readonly framing: StreamFraming;
  readonly contentType: string;
  private readonly candidates = new Map<number, CandidateState>();
  private responseId = '';
  private reported: TokenUsage | null = null;
  private reasoning = 0;

  constructor(
    private readonly model: string,
    sse: boolean,
    options: StreamEncoderOptions,
  ) {
    this.transcriptOf = new ChatStreamTranscript(options.transcriptCharacters);
    this.framing = new StreamFraming(sse);
    this.contentType = this.framing.contentType;
  }

  encode(event: ChunkReceived): string {
    const { chunk } = event;
    this.transcriptOf.add(chunk);
    if (this.responseId === '' && typeof chunk.id === 'string') this.responseId = chunk.id;
    let frames = '';
    for (const choice of (Array.isArray(chunk.choices) ? chunk.choices : []) as { index?: unknown; delta?: ChunkDelta | null; finish_reason?: unknown }[]) {
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const state = this.stateOf(index);
      const delta = choice.delta;
      if (delta !== undefined && delta !== null) {
        const parts: JsonObject[] = [];
        if (typeof delta.reasoning_content === 'string' && delta.reasoning_content.length > 0) parts.push({ text: delta.reasoning_content, thought: true });
        for (const text of [delta.content, delta.refusal]) if (typeof text === 'string' && text.length > 0) parts.push({ text });
        if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) noteToolCall(state, call);
        if (parts.length > 0) {
          if (state.held.length > 0) frames += this.response(index, state.held, null);
          state.held = parts;
        }
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) state.finishReason = choice.finish_reason;
    }
    return frames;
  }

  usage(event: UsageReported): string {
    this.reported = event.usage;
    const reasoning = reasoningTokensOf(event.chunk?.usage);
    if (reasoning > 0) this.reasoning = reasoning;
    return '';
  }

  end(usage: TokenUsage | null): string {
    if (usage !== null) this.reported = usage;
    if (this.candidates.size === 0) this.stateOf(0);
    let frames = '';
    for (const [index, state] of this.candidates) {
      const parts = [...state.held, ...[...state.toolCalls.values()].map(functionCallPart)];
      frames += this.response(index, parts, finishReasonOf(state.finishReason));
    }
    return frames + this.framing.close();
  }

  /** The pieces held back go out first: the caller keeps what was answered before the failure. */
  fail(error: GatewayError, requestId: string): string {
    let frames = '';
    for (const [index, state] of this.candidates) if (state.held.length > 0) frames += this.response(index, state.held, null);
    return frames + this.framing.frame(JSON.stringify(geminiErrorBody(error, requestId))) + this.framing.close();
  }

  transcript(usage: TokenUsage | null, complete: boolean): JsonObject {
    return this.transcriptOf.payload(usage, complete);
  }

  private stateOf(index: number): CandidateState {
    let state = this.candidates.get(index);
    if (state === undefined) this.candidates.set(index, (state = { held: [], toolCalls: new Map(), finishReason: null }));
    return state;
  }

  private response(index: number, parts: JsonObject[], finishReason: string | null): string {
    const candidate: JsonObject = { content: { parts, role: 'model' }, index };
    if (finishReason !== null) candidate.finishReason = finishReason;
    const response: JsonObject = { candidates: [candidate] };
    if (this.reported !== null) response.usageMetadata = usageMetadataOf(this.reported, this.reasoning);
    response.modelVersion = this.model;
    response.responseId = this.responseId;
    return this.framing.frame(JSON.stringify(response));
  }
}

function noteToolCall(state: CandidateState, call: NonNullable<ChunkDelta['tool_calls']>[number]): void {
  const position = typeof call.index === 'number' ? call.index : 0;
  let soFar = state.toolCalls.get(position);
  if (soFar === undefined) state.toolCalls.set(position, (soFar = { id: '', function: { name: '', arguments: '' } }));
  if (typeof call.id === 'string') soFar.id += call.id;
  const name = call.function?.name;
  const pieces = call.function?.arguments;
  if (typeof name === 'string') soFar.function.name += name;
  if (typeof pieces === 'string') soFar.function.arguments += pieces;
}
