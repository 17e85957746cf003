import type { JsonObject, TokenUsage } from '../../model-api/index.js';
import { newResponsesId } from './ids.js';
import type { ToolNames } from './request-decoder.js';

/**
 * The Responses response encoder: a `chat.completion` as a `response` object. The object's
 * request members (instructions, tools, tool_choice, text, sampling, metadata, store,
 * previous_response_id) echo the caller's body, as OpenAI's do; `skeleton` makes them once,
 * for a JSON answer and for every lifecycle event of a stream.
 */

/** What a response object says about itself besides the answer. */
export interface ResponseIdentity {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** The model as the caller asked for it. */
  model: string;
}

/** How the answer ended: the chat `finish_reason`, null when the provider gave none. */
export type FinishReason = string | null;

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function orNull(value: unknown): unknown {
  return value === undefined ? null : value;
}

/** The response object before any output: `status: in_progress`, no usage. */
export function responseSkeleton(body: JsonObject, identity: ResponseIdentity): JsonObject {
  const text = isRecord(body.text) ? body.text : {};
  return {
    id: identity.id,
    object: 'response',
    created_at: identity.createdAt,
    status: 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: orNull(body.instructions),
    max_output_tokens: orNull(body.max_output_tokens),
    model: identity.model,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: orNull(body.previous_response_id),
    reasoning: { effort: null, summary: null },
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { ...text, format: text.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: null,
    user: orNull(body.user),
    metadata: isRecord(body.metadata) ? body.metadata : {},
  };
}

/** Usage in the Responses format's words. */
export function responsesUsage(usage: TokenUsage, reasoningTokens = 0): JsonObject {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedPromptTokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: usage.totalTokens,
  };
}

/** An output message item holding text (and the model's refusal, when it refused). */
export function messageItem(id: string, text: string, refusal: string | null, status: 'in_progress' | 'completed'): JsonObject {
  const content: JsonObject[] = [];
  if (text.length > 0 || refusal === null) content.push(outputTextPart(text));
  if (refusal !== null) content.push({ type: 'refusal', refusal });
  return { id, type: 'message', status, content, role: 'assistant' };
}

export function outputTextPart(text: string): JsonObject {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

export function functionCallItem(id: string, call: { callId: string; name: string; arguments: string }, status: 'in_progress' | 'completed' | 'incomplete'): JsonObject {
  return { id, type: 'function_call', status, arguments: call.arguments, call_id: call.callId, name: call.name };
}

/**
 * A tool call as the caller's tool made it: a function call (a namespace's function under its
 * own name, with its namespace), or a custom tool's call with its freeform input.
 */
export function toolCallItem(id: string, call: { callId: string; name: string; arguments: string }, status: 'in_progress' | 'completed' | 'incomplete', tools: ToolNames): JsonObject {
  const tool = tools.get(call.name);
  if (tool?.custom === true) return { id, type: 'custom_tool_call', status, call_id: call.callId, input: customInputOf(call.arguments), name: tool.name };
  const item = functionCallItem(id, { ...call, name: tool?.name ?? call.name }, status);
  if (tool?.namespace !== undefined) item.namespace = tool.namespace;
  return item;
}

/** A custom tool's input: the `input` argument the chat call asked the model for, or the arguments as they came. */
function customInputOf(argumentsText: string): string {
  try {
    const parsed = JSON.parse(argumentsText) as unknown;
    if (isRecord(parsed) && typeof parsed.input === 'string') return parsed.input;
  } catch {
    // The model wrote something else: the caller gets it as it is.
  }
  return argumentsText;
}

/** A reasoning item: the model's reasoning as its summary, and the signature its own provider needs back as `encrypted_content`. */
export function reasoningItem(id: string, text: string, signature: string | null): JsonObject {
  return { id, type: 'reasoning', summary: text.length > 0 ? [{ type: 'summary_text', text }] : [], ...(signature !== null ? { encrypted_content: signature } : {}) };
}

/**
 * The finished response: `completed`, or `incomplete` when the answer was cut by the length
 * limit or a content filter (the reasons OpenAI gives).
 */
export function finishedResponse(skeleton: JsonObject, output: JsonObject[], usage: JsonObject | null, finishReason: FinishReason): JsonObject {
  const incomplete = finishReason === 'length' ? 'max_output_tokens' : finishReason === 'content_filter' ? 'content_filter' : null;
  return {
    ...skeleton,
    status: incomplete === null ? 'completed' : 'incomplete',
    incomplete_details: incomplete === null ? null : { reason: incomplete },
    output,
    usage,
  };
}

/** The output items of a chat completion's first choice: its reasoning, its message, then one item per tool call. */
export function outputOfCompletion(completion: JsonObject, tools: ToolNames): { output: JsonObject[]; finishReason: FinishReason } {
  const choice = Array.isArray(completion.choices) && isRecord(completion.choices[0]) ? completion.choices[0] : {};
  const message = isRecord(choice.message) ? choice.message : {};
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' && message.refusal.length > 0 ? message.refusal : null;
  const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
  const output: JsonObject[] = [];
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : '';
  const signature = typeof message.reasoning_signature === 'string' ? message.reasoning_signature : null;
  if (reasoning.length > 0 || signature !== null) output.push(reasoningItem(newResponsesId('rs'), reasoning, signature));
  if (text.length > 0 || refusal !== null || toolCalls.length === 0) output.push(messageItem(newResponsesId('msg'), text, refusal, 'completed'));
  for (const call of toolCalls) {
    const fn = isRecord(call.function) ? call.function : {};
    const name = String(fn.name ?? '');
    output.push(
      toolCallItem(
        newResponsesId(tools.get(name)?.custom === true ? 'ctc' : 'fc'),
        { callId: String(call.id ?? ''), name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' },
        'completed',
        tools,
      ),
    );
  }
  return { output, finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null };
}

/** The reasoning tokens a chat completion's (or a usage chunk's) usage reports (`completion_tokens_details.reasoning_tokens`), else 0. */
export function reasoningTokensOf(completion: JsonObject): number {
  const usage = isRecord(completion.usage) ? completion.usage : {};
  const details = isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  return typeof details.reasoning_tokens === 'number' ? details.reasoning_tokens : 0;
}

/** A chat completion as the finished response object. */
export function encodeResponse(skeleton: JsonObject, completion: JsonObject, usage: TokenUsage | null, tools: ToolNames): JsonObject {
  const { output, finishReason } = outputOfCompletion(completion, tools);
  return finishedResponse(skeleton, output, usage === null ? null : responsesUsage(usage, reasoningTokensOf(completion)), finishReason);
}
