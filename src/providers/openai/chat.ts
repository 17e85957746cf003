import type { EventSourceMessage } from 'eventsource-parser';
import { GatewayError, type UpstreamFacts } from '../../errors/index.js';
import { passThroughJson } from '../shared/json-members.js';
import { isRecord } from '../shared/message-content.js';
import type { ChatFrames } from '../shared/sse-stream.js';
import type { CallExtensions, ChatCall, ChatCompletionResult, ChatModelProvider, ChatStream, ChatStreamEvent, JsonObject } from '../../model-api/index.js';
import { chatEffortOf, reasoningOf, topKOf, topKParam } from '../shared/reasoning.js';
import type { OpenAICompatibleClient } from './client.js';
import { openAIFileParts } from './file-parts.js';
import { countPromptTokens } from './prompt-tokens.js';
import { errorKindOf, errorMessageOf, isObjectList, parseJson, usageFromWire } from './wire.js';

/**
 * Chat completions, passed through: the request body goes upstream as the caller sent it
 * (the route only removed `provider` and `stream`; file parts in the gateway's own forms are
 * put in OpenAI's), the response comes back as the provider sent it.
 */
export class OpenAICompatibleChat implements ChatModelProvider {
  constructor(
    private readonly client: OpenAICompatibleClient,
    /** Whether the server samples by `top_k` (OpenAI-compatible servers such as vLLM and Ollama do; OpenAI refuses it). */
    private readonly takesTopK: boolean,
    /** Whether the server is OpenAI's own, whose tokenizer the gateway has (countPromptTokens). */
    private readonly countsLikeOpenAI: boolean,
  ) {}

  countPromptTokens(call: Pick<ChatCall, 'body' | 'upstreamModel'>): number | null {
    return this.countsLikeOpenAI ? countPromptTokens(call.body, call.upstreamModel) : null;
  }

  hintsDropped(_body: JsonObject, extensions?: CallExtensions): string[] {
    return !this.takesTopK && extensions?.topK !== undefined ? [topKParam({ extensions })] : [];
  }

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const completion = await this.client.postJson('/chat/completions', passThroughJson(call, { model: call.upstreamModel, ...this.members(call) }), call, 'choices');
    return { completion, usage: usageFromWire(completion.usage) };
  }

  stream(call: ChatCall): Promise<ChatStream> {
    // Usage is always asked for, so it is accounted even when the caller did not ask to see it.
    const streamOptions = { ...(call.body.stream_options as JsonObject | undefined), include_usage: true };
    const payload = passThroughJson(call, { model: call.upstreamModel, stream: true, stream_options: streamOptions, ...this.members(call) });
    return this.client.postForStream('/chat/completions', payload, call, new ChatCompletionChunks(this.client.name));
  }

  /** The members the adapter sets on the caller's body: file parts in OpenAI's form, and a translated call's extensions in OpenAI's words. */
  private members(call: ChatCall): JsonObject {
    const files = openAIFileParts(call.body);
    if (call.sourceJson !== undefined && call.extensions === undefined) return files;
    return translatedMembers(call, files, this.takesTopK);
  }
}

/**
 * A call the gateway built (a translated format, VETTING, agents) in OpenAI's own words: the
 * reasoning extension as `reasoning_effort` (unless the body has one), `top_k` where the server
 * takes it, web search as `web_search_options`, and the gateway's reasoning members (ReasoningMembers)
 * taken off earlier assistant turns: an OpenAI model has no use for another vendor's thinking.
 */
function translatedMembers(call: ChatCall, files: { messages?: unknown[] }, takesTopK: boolean): JsonObject {
  const members: JsonObject = files;
  const messages = files.messages ?? call.body.messages;
  const reasoning = reasoningOf(call);
  if (reasoning !== null && call.body.reasoning_effort === undefined) {
    const effort = chatEffortOf(reasoning);
    if (effort !== null) members.reasoning_effort = effort;
  }
  const topK = topKOf(call);
  if (topK !== null && takesTopK && call.body.top_k === undefined) members.top_k = topK;
  if (call.extensions?.webSearch !== undefined) members.web_search_options = {};
  if (Array.isArray(messages) && messages.some(hasReasoningMembers)) members.messages = messages.map((message) => (hasReasoningMembers(message) ? withoutReasoningMembers(message) : message));
  return members;
}

function hasReasoningMembers(message: unknown): message is JsonObject {
  return isRecord(message) && (message.reasoning_content !== undefined || message.reasoning_signature !== undefined);
}

function withoutReasoningMembers(message: JsonObject): JsonObject {
  const { reasoning_content: _content, reasoning_signature: _signature, ...rest } = message;
  return rest;
}

/** A failure the frames show: the call's error before the first event, the stream's last event after it. */
function streamFailure(message: string, logDetail: Record<string, unknown>, upstream?: UpstreamFacts): GatewayError {
  return new GatewayError('provider_error', `${message} Try again later.`, { logDetail, ...(upstream === undefined ? {} : { upstream }) });
}

/**
 * The provider's `chat.completion.chunk` frames as stream events. The stream only counts as
 * complete with `data: [DONE]`.
 */
export class ChatCompletionChunks implements ChatFrames {
  constructor(private readonly provider: string) {}

  read(message: EventSourceMessage, events: ChatStreamEvent[]): boolean {
    if (message.data === '[DONE]') return true;
    const parsed = parseJson(message.data);
    if (!isRecord(parsed)) throw this.unreadable(message.data);
    const frame = parsed;
    if (message.event === 'error' || (frame.error !== undefined && frame.error !== null)) {
      const { upstreamType, upstreamCode } = errorKindOf(frame);
      throw streamFailure('The model provider reported an error during the stream.', {}, {
        provider: this.provider,
        message: errorMessageOf(frame),
        ...(upstreamType === undefined ? {} : { errorType: upstreamType }),
        ...(upstreamCode === undefined ? {} : { errorCode: upstreamCode }),
      });
    }
    // A chunk's choices are what every client reads: a list of objects, or absent (a usage-only frame of some servers).
    if (frame.choices !== undefined && !isObjectList(frame.choices)) throw this.unreadable(message.data);
    const usage = usageFromWire(frame.usage);
    const hasChoices = Array.isArray(frame.choices) && frame.choices.length > 0;
    if (usage === null || hasChoices) events.push({ type: 'chunk-received', chunk: frame, json: message.data });
    // A usage-only chunk (`choices: []`) is the provider's own; the route shows it when asked.
    if (usage !== null) events.push(hasChoices ? { type: 'usage-reported', usage } : { type: 'usage-reported', usage, chunk: frame });
    return false;
  }

  endedEarly(): GatewayError {
    return streamFailure('The model provider ended the stream before it was complete.', { provider: this.provider, reason: 'stream ended without [DONE]' });
  }

  private unreadable(data: string): GatewayError {
    return streamFailure('The model provider sent a stream frame the gateway could not read.', { provider: this.provider, frame: data.slice(0, 200) });
  }
}
