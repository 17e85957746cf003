import type { GatewayError } from '../../errors/index.js';
import type { ChunkReceived, JsonObject, TokenUsage, UsageReported } from '../../model-api/index.js';
import { ChatStreamTranscript } from '../chat-transcript.js';
import type { StreamEncoder, StreamEncoderOptions } from '../types.js';
import { eventFrame } from './frames.js';
import { newResponsesId } from './ids.js';
import { finishedResponse, outputTextPart, reasoningItem, reasoningTokensOf, responsesUsage, toolCallItem, type FinishReason } from './response-encoder.js';
import type { ToolNames } from './request-decoder.js';

/**
 * The Responses stream encoder: the internal chat stream's events as the Responses API's own
 * server-sent events, each `event: <type>` with `data: {"type", …, "sequence_number"}`, in the
 * order the official SDK's stream helper applies them (ResponseStream / accumulateResponse):
 *
 *   response.created, response.in_progress,
 *   per output item: response.output_item.added,
 *     a message: response.content_part.added, response.output_text.delta…,
 *       response.output_text.done, response.content_part.done (a refusal likewise with
 *       response.refusal.delta / .done),
 *     a function call: response.function_call_arguments.delta…, .done,
 *   response.output_item.done,
 *   then response.completed (or .incomplete) with the usage, or response.failed.
 *
 * The text of the answer is kept whole: the last event carries the complete response, as
 * OpenAI's does, and `keep` has it (to store) before that event is sent. The request log
 * gets the chat transcript every translated stream keeps.
 */

export interface ResponsesStreamSettings extends StreamEncoderOptions {
  /** The response object before any output (responseSkeleton). */
  skeleton: JsonObject;
  /** Keeps the finished response before the caller sees its last event; never rejects. */
  keep(response: JsonObject): Promise<void>;
  /** The caller's tools by their chat function names (namespace and custom tools). */
  tools: ToolNames;
}

/** The model's reasoning being streamed: one reasoning item with one summary part. */
interface OpenReasoning {
  id: string;
  outputIndex: number;
  text: string;
  signature: string | null;
}

/** A text part being streamed: output text or a refusal. */
interface OpenPart {
  kind: 'output_text' | 'refusal';
  text: string;
}

interface OpenMessage {
  id: string;
  outputIndex: number;
  parts: OpenPart[];
}

interface OpenFunctionCall {
  id: string;
  outputIndex: number;
  callId: string;
  name: string;
  arguments: string;
  /** A custom tool's call: its input is sent whole when it ends. */
  custom: boolean;
}

interface ChunkDelta {
  content?: unknown;
  refusal?: unknown;
  tool_calls?: unknown;
  reasoning_content?: unknown;
  reasoning_signature?: unknown;
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0;
  private opened = false;
  private readonly transcriptOf: ChatStreamTranscript;
  private readonly skeleton: JsonObject;
  private readonly output: JsonObject[] = [];
  private message: OpenMessage | null = null;
  private reasoning: OpenReasoning | null = null;
  /** Function-call items by the chat stream's tool-call index, open until the stream ends. */
  private readonly calls = new Map<number, OpenFunctionCall>();
  private finishReason: FinishReason = null;
  /** The reasoning tokens of the provider's last usage report (its chunk's `completion_tokens_details`). */
  private reasoningTokens = 0;
  /** The usage the provider reported so far. */
  private reported: TokenUsage | null = null;

  constructor(private readonly settings: ResponsesStreamSettings) {
    this.skeleton = settings.skeleton;
    this.transcriptOf = new ChatStreamTranscript(settings.transcriptCharacters);
  }

  /** The frames for one chat chunk, after `response.created` and `response.in_progress` when it is the first. */
  encode(event: ChunkReceived): string {
    this.transcriptOf.add(event.chunk);
    return this.opening() + this.framesOf(event);
  }

  /** Usage is shown in the last event, and in the first when it came before; the reasoning tokens are only in the provider's chunk. */
  usage(event: UsageReported): string {
    this.reported = event.usage;
    if (event.chunk !== undefined) this.reasoningTokens = reasoningTokensOf(event.chunk);
    return '';
  }

  /** Closes every open item, keeps the response, then ends with `response.completed` (or `.incomplete`) carrying the usage. */
  async end(usage: TokenUsage | null): Promise<string> {
    let frames = this.opening() + this.closeReasoning() + this.closeMessage();
    for (const call of [...this.calls.values()].sort((a, b) => a.outputIndex - b.outputIndex)) frames += this.closeCall(call);
    this.calls.clear();
    const response = finishedResponse(this.skeleton, this.output, usage === null ? null : responsesUsage(usage, this.reasoningTokens), this.finishReason);
    await this.settings.keep(response);
    return frames + this.frame(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  /** Ends a stream the provider failed: `response.failed` with the output so far (its items incomplete) and the error. */
  fail(error: GatewayError): string {
    const output = [...this.output];
    if (this.message !== null) output[this.message.outputIndex] = { ...output[this.message.outputIndex], status: 'incomplete', content: this.message.parts.map((part) => partOf(part, part.text)) };
    for (const call of this.calls.values()) output[call.outputIndex] = toolCallItem(call.id, call, 'incomplete', this.settings.tools);
    if (this.reasoning !== null) output[this.reasoning.outputIndex] = reasoningItem(this.reasoning.id, this.reasoning.text, this.reasoning.signature);
    const response = { ...this.skeleton, status: 'failed', error: { code: 'server_error', message: error.message }, output };
    return this.opening() + this.frame('response.failed', { response });
  }

  transcript(usage: TokenUsage | null, complete: boolean): JsonObject {
    return this.transcriptOf.payload(usage, complete);
  }

  /** `response.created` and `response.in_progress`, once, before anything else. */
  private opening(): string {
    if (this.opened) return '';
    this.opened = true;
    // The prompt's count where the provider gave it before its first token (Anthropic, Gemini).
    const response = this.reported === null ? this.skeleton : { ...this.skeleton, usage: responsesUsage(this.reported) };
    return this.frame('response.created', { response }) + this.frame('response.in_progress', { response });
  }

  private framesOf(event: ChunkReceived): string {
    const choice = Array.isArray(event.chunk.choices) ? (event.chunk.choices as unknown[]).find((candidate) => isRecord(candidate) && (candidate.index ?? 0) === 0) : undefined;
    if (!isRecord(choice)) return '';
    const delta: ChunkDelta = isRecord(choice.delta) ? choice.delta : {};
    let frames = '';
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content.length > 0) frames += this.reasoningDelta(delta.reasoning_content);
    if (typeof delta.reasoning_signature === 'string') frames += this.reasoningSignature(delta.reasoning_signature);
    if (typeof delta.content === 'string' && delta.content.length > 0) frames += this.textDelta('output_text', delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) frames += this.textDelta('refusal', delta.refusal);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isRecord(call)) frames += this.toolCallDelta(call);
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    return frames;
  }

  /** A piece of the model's reasoning: the reasoning item and its summary part open with the first. */
  private reasoningDelta(text: string): string {
    let frames = '';
    let reasoning = this.reasoning;
    if (reasoning === null) {
      frames += this.openReasoning();
      reasoning = this.reasoning!;
    }
    if (reasoning.text.length === 0) frames += this.frame('response.reasoning_summary_part.added', { ...this.summaryWhere(reasoning), part: { type: 'summary_text', text: '' } });
    reasoning.text += text;
    return frames + this.frame('response.reasoning_summary_text.delta', { ...this.summaryWhere(reasoning), delta: text });
  }

  /** The signature ends the reasoning it belongs to (a reasoning item of its own when no text came). */
  private reasoningSignature(signature: string): string {
    const opened = this.reasoning === null ? this.openReasoning() : '';
    this.reasoning!.signature = signature;
    return opened + this.closeReasoning();
  }

  private openReasoning(): string {
    this.reasoning = { id: newResponsesId('rs'), outputIndex: this.output.length, text: '', signature: null };
    const item = reasoningItem(this.reasoning.id, '', null);
    this.output.push(item);
    return this.frame('response.output_item.added', { item, output_index: this.reasoning.outputIndex });
  }

  private summaryWhere(reasoning: OpenReasoning): JsonObject {
    return { item_id: reasoning.id, output_index: reasoning.outputIndex, summary_index: 0 };
  }

  private closeReasoning(): string {
    const reasoning = this.reasoning;
    if (reasoning === null) return '';
    this.reasoning = null;
    let frames = '';
    if (reasoning.text.length > 0) {
      frames += this.frame('response.reasoning_summary_text.done', { ...this.summaryWhere(reasoning), text: reasoning.text });
      frames += this.frame('response.reasoning_summary_part.done', { ...this.summaryWhere(reasoning), part: { type: 'summary_text', text: reasoning.text } });
    }
    const item = reasoningItem(reasoning.id, reasoning.text, reasoning.signature);
    this.output[reasoning.outputIndex] = item;
    return frames + this.frame('response.output_item.done', { item, output_index: reasoning.outputIndex });
  }

  private textDelta(kind: OpenPart['kind'], text: string): string {
    let frames = this.closeReasoning();
    if (this.message === null) {
      this.message = { id: newResponsesId('msg'), outputIndex: this.output.length, parts: [] };
      // Announced without content: the parts follow with their own events.
      const item = { id: this.message.id, type: 'message', status: 'in_progress', content: [], role: 'assistant' };
      this.output.push(item);
      frames += this.frame('response.output_item.added', { item, output_index: this.message.outputIndex });
    }
    const message = this.message;
    let part = message.parts.at(-1);
    if (part === undefined || part.kind !== kind) {
      part = { kind, text: '' };
      message.parts.push(part);
      frames += this.frame('response.content_part.added', { content_index: message.parts.length - 1, item_id: message.id, output_index: message.outputIndex, part: partOf(part, '') });
    }
    part.text += text;
    const where = { content_index: message.parts.length - 1, delta: text, item_id: message.id };
    return frames + (kind === 'output_text' ? this.frame('response.output_text.delta', { ...where, logprobs: [], output_index: message.outputIndex }) : this.frame('response.refusal.delta', { ...where, output_index: message.outputIndex }));
  }

  private toolCallDelta(delta: JsonObject): string {
    const index = typeof delta.index === 'number' ? delta.index : 0;
    const fn = isRecord(delta.function) ? delta.function : {};
    let frames = '';
    let call = this.calls.get(index);
    if (call === undefined) {
      // Reasoning and text before a tool call are finished: their items close first.
      frames += this.closeReasoning() + this.closeMessage();
      const name = typeof fn.name === 'string' ? fn.name : '';
      const custom = this.settings.tools.get(name)?.custom === true;
      call = { id: newResponsesId(custom ? 'ctc' : 'fc'), outputIndex: this.output.length, callId: typeof delta.id === 'string' ? delta.id : '', name, arguments: '', custom };
      this.calls.set(index, call);
      const item = toolCallItem(call.id, { callId: call.callId, name: call.name, arguments: '' }, 'in_progress', this.settings.tools);
      this.output.push(item);
      frames += this.frame('response.output_item.added', { item, output_index: call.outputIndex });
    }
    const pieces = fn.arguments;
    if (typeof pieces === 'string' && pieces.length > 0) {
      call.arguments += pieces;
      // A custom tool's input is one argument of the function's JSON: it is sent whole when the call ends.
      if (!call.custom) frames += this.frame('response.function_call_arguments.delta', { delta: pieces, item_id: call.id, output_index: call.outputIndex });
    }
    return frames;
  }

  private closeMessage(): string {
    const message = this.message;
    if (message === null) return '';
    this.message = null;
    let frames = '';
    for (const [contentIndex, part] of message.parts.entries()) {
      const where = { content_index: contentIndex, item_id: message.id, output_index: message.outputIndex };
      frames +=
        part.kind === 'output_text'
          ? this.frame('response.output_text.done', { ...where, logprobs: [], text: part.text })
          : this.frame('response.refusal.done', { ...where, refusal: part.text });
      frames += this.frame('response.content_part.done', { ...where, part: partOf(part, part.text) });
    }
    const item = { id: message.id, type: 'message', status: 'completed', content: message.parts.map((part) => partOf(part, part.text)), role: 'assistant' };
    this.output[message.outputIndex] = item;
    return frames + this.frame('response.output_item.done', { item, output_index: message.outputIndex });
  }

  private closeCall(call: OpenFunctionCall): string {
    const item = toolCallItem(call.id, call, 'completed', this.settings.tools);
    this.output[call.outputIndex] = item;
    const where = { item_id: call.id, output_index: call.outputIndex };
    const done = call.custom
      ? this.frame('response.custom_tool_call_input.delta', { ...where, delta: item.input }) + this.frame('response.custom_tool_call_input.done', { ...where, input: item.input })
      : this.frame('response.function_call_arguments.done', { arguments: call.arguments, ...where });
    return done + this.frame('response.output_item.done', { item, output_index: call.outputIndex });
  }

  /** One server-sent event: its type on the `event:` line and in the data, then the sequence number. */
  private frame(type: string, members: JsonObject): string {
    const data = JSON.stringify({ type, ...members, sequence_number: this.sequence });
    this.sequence += 1;
    return eventFrame(type, data);
  }
}

function partOf(part: OpenPart, text: string): JsonObject {
  return part.kind === 'output_text' ? outputTextPart(text) : { type: 'refusal', refusal: text };
}
