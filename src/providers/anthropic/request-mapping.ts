import { invalidBody, unsupportedField } from '../../errors/index.js';
import type { ChatCall, JsonObject, WebSearchRequest } from '../../model-api/index.js';
import { toolArgumentsObject } from '../shared/caller-values.js';
import { isRecord, textOf } from '../shared/message-content.js';
import { reasoningOf, thinkingBudgetOf, topKOf, topKParam } from '../shared/reasoning.js';
import { ownSignature } from '../shared/signatures.js';
import { textBlocks, userBlocks } from './content-parts.js';
import type { AnthropicMessage, AnthropicRequest, AnthropicRequestBlock, AnthropicTool, AnthropicToolChoice, AnthropicWebSearchTool } from './wire.js';

/**
 * Anthropic requires max_tokens; the adapter does not see the catalog, so a request without
 * max_tokens / max_completion_tokens gets this value, which every Claude model accepts.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic has no JSON mode: `response_format` becomes a forced tool whose input is the answer. */
const STRUCTURED_OUTPUT_DESCRIPTION = 'Give your final answer by calling this tool; its input is the answer.';

export interface RequestPlan {
  request: AnthropicRequest;
  /** The forced tool carrying `response_format` output: its input is returned as the message content. */
  structuredOutputTool: string | null;
}

/** Chat-completions fields the Messages API has no equivalent for, left out as hints (docs/providers-anthropic.md). */
const HINT_FIELDS = ['seed', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'store', 'metadata', 'service_tier', 'prompt_cache_key', 'safety_identifier', 'verbosity'] as const;

/** The smallest thinking budget Anthropic takes (its extended thinking page). */
const MIN_THINKING_BUDGET = 1_024;

/** The call as the mapping reads it: the chat body and its extensions. */
export type MappedCall = Pick<ChatCall, 'body' | 'extensions'>;

/**
 * Whether and how Claude thinks for a call: a budget of at least 1,024 tokens below max_tokens
 * (Anthropic's rules). Not when the answer is a forced tool call (a named tool_choice, `required`,
 * or response_format's tool), which Anthropic does not allow with thinking, nor when max_tokens
 * leaves no room: the reasoning is then left out and named.
 */
function thinkingOf(call: MappedCall): { budget: number | null; dropped: string | null } {
  const reasoning = reasoningOf(call);
  if (reasoning === null) return { budget: null, dropped: null };
  const wanted = thinkingBudgetOf(reasoning) ?? DEFAULT_THINKING_BUDGET;
  if (wanted === 0) return { budget: null, dropped: null };
  const { body } = call;
  const forced = (body.response_format !== undefined && body.response_format !== null && (body.response_format as JsonObject).type !== 'text') || body.tool_choice === 'required' || isRecord(body.tool_choice);
  const room = maxTokensOf(body) - 1;
  if (forced || room < MIN_THINKING_BUDGET) return { budget: null, dropped: reasoning.param };
  return { budget: Math.min(Math.max(wanted, MIN_THINKING_BUDGET), room), dropped: null };
}

/** The budget for "think as the model sees fit" (adaptive thinking, an effort with no budget): Anthropic's own example budget. */
const DEFAULT_THINKING_BUDGET = 10_000;

/**
 * The fields of a call the request leaves out, named for the log: hints Anthropic has no
 * equivalent for (null counts as not set); sampling Anthropic refuses while Claude thinks
 * (temperature, top_k, a top_p below 0.95); the reasoning when Claude cannot think for it.
 */
export function hintsDroppedOf(call: MappedCall): string[] {
  const { body } = call;
  const dropped: string[] = HINT_FIELDS.filter((field) => body[field] !== undefined && body[field] !== null);
  const thinking = thinkingOf(call);
  if (thinking.dropped !== null) dropped.push(thinking.dropped);
  if (thinking.budget !== null) {
    if (typeof body.temperature === 'number' && body.temperature !== 1) dropped.push('temperature');
    if (typeof body.top_p === 'number' && body.top_p < 0.95) dropped.push('top_p');
    if (topKOf(call) !== null) dropped.push(topKParam(call));
  }
  return dropped;
}

/** Translates an OpenAI chat-completions body (and its extensions) into an Anthropic Messages request. */
export function toAnthropicRequest(model: string, call: MappedCall, stream: boolean, provider: string): RequestPlan {
  const { body } = call;
  refuseUnsupported(body);
  const { system, messages } = toAnthropicMessages(body.messages, provider);
  const structuredTool = responseFormatTool(body.response_format);
  const webSearch = call.extensions?.webSearch;
  const tools: (AnthropicTool | AnthropicWebSearchTool)[] = [...toolsOf(body.tools), ...(structuredTool !== null ? [structuredTool] : [])];
  if (webSearch !== undefined) tools.push(webSearchTool(webSearch));
  const { budget } = thinkingOf(call);
  const thinks = budget !== null;
  const topK = topKOf(call);
  const request: AnthropicRequest = {
    model,
    max_tokens: maxTokensOf(body),
    messages,
    ...(system !== null ? { system } : {}),
    ...(typeof body.temperature === 'number' && !(thinks && body.temperature !== 1) ? { temperature: body.temperature } : {}),
    ...(typeof body.top_p === 'number' && !(thinks && body.top_p < 0.95) ? { top_p: body.top_p } : {}),
    ...(topK !== null && !thinks ? { top_k: topK } : {}),
    ...stopSequencesOf(body.stop),
    ...(tools.length > 0 ? { tools } : {}),
    ...toolChoiceOf(body, tools.length > 0, structuredTool),
    ...(thinks ? { thinking: { type: 'enabled', budget_tokens: budget } } : {}),
    ...(typeof body.user === 'string' ? { metadata: { user_id: body.user } } : {}),
    ...(stream ? { stream: true } : {}),
  };
  return { request, structuredOutputTool: structuredTool?.name ?? null };
}

function webSearchTool(search: WebSearchRequest): AnthropicWebSearchTool {
  return {
    type: 'web_search_20250305',
    name: 'web_search',
    ...(search.maxUses !== null ? { max_uses: search.maxUses } : {}),
    ...(search.allowedDomains !== null ? { allowed_domains: search.allowedDomains } : {}),
    ...(search.blockedDomains !== null ? { blocked_domains: search.blockedDomains } : {}),
  };
}

/** Fields that change the shape of the answer and that Anthropic cannot honour. */
function refuseUnsupported(body: JsonObject): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw unsupportedField('n: this model returns one choice per request; send n: 1 or leave n out, or pick an OpenAI or Gemini model, which make several.', 'n');
  }
  if (body.logprobs === true) throw unsupportedField('logprobs: this model does not return log probabilities; leave logprobs out, or pick an OpenAI model.', 'logprobs');
}

function maxTokensOf(body: JsonObject): number {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' ? value : DEFAULT_MAX_TOKENS;
}

/**
 * `stop` as Anthropic's stop_sequences. Anthropic refuses an empty or whitespace-only
 * sequence (a common `stop: ["\n"]` among them) with a message about a field the caller never
 * sent; such a stop is refused here, naming the caller's own field, rather than dropped, which
 * would quietly give a longer answer than the caller asked for.
 */
function stopSequencesOf(stop: unknown): { stop_sequences?: string[] } {
  if (stop === undefined || stop === null) return {};
  const sequences = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(sequences) || !sequences.every((item): item is string => typeof item === 'string')) {
    throw invalidBody('stop must be a string or an array of strings.', 'stop');
  }
  sequences.forEach((sequence, index) => {
    if (sequence.trim().length > 0) return;
    const param = typeof stop === 'string' ? 'stop' : `stop[${index}]`;
    const problem = sequence.length === 0 ? 'is empty' : 'is only whitespace';
    throw invalidBody(`${param} ${problem}; this model can stop only at sequences with visible characters. Remove it, or use e.g. "END".`, param);
  });
  return sequences.length > 0 ? { stop_sequences: sequences } : {};
}

/**
 * System (and developer) messages, wherever they appear, are joined into the top-level
 * `system`; consecutive messages of the same role are merged, as Anthropic requires strictly
 * alternating user/assistant turns (tool results travel in user turns).
 */
function toAnthropicMessages(input: unknown, provider: string): { system: string | null; messages: AnthropicMessage[] } {
  if (!Array.isArray(input)) throw invalidBody('messages must be an array.', 'messages');
  const systemTexts: string[] = [];
  const messages: AnthropicMessage[] = [];
  input.forEach((message, index) => {
    const param = `messages[${index}]`;
    if (!isRecord(message)) throw invalidBody(`${param} must be an object with role and content.`, param);
    if (message.role === 'system' || message.role === 'developer') {
      systemTexts.push(textOf(message.content, `${param}.content`));
      return;
    }
    const turn = toTurn(message, param, provider);
    if (turn.content.length === 0) return;
    const previous = messages.at(-1);
    if (previous?.role === turn.role) previous.content.push(...turn.content);
    else messages.push(turn);
  });
  const system = systemTexts.filter((text) => text.length > 0).join('\n\n');
  return { system: system.length > 0 ? system : null, messages };
}

function toTurn(message: Record<string, unknown>, param: string, provider: string): AnthropicMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: userBlocks(message.content, `${param}.content`) };
    case 'assistant':
      return {
        role: 'assistant',
        content: [...thinkingBlocks(message, provider), ...textBlocks(textOf(message.content, `${param}.content`)), ...toolUseBlocks(message.tool_calls, `${param}.tool_calls`)],
      };
    case 'tool': {
      if (typeof message.tool_call_id !== 'string') throw invalidBody(`${param}.tool_call_id must name the tool call it answers.`, `${param}.tool_call_id`);
      const result: AnthropicRequestBlock = { type: 'tool_result', tool_use_id: message.tool_call_id, content: textOf(message.content, `${param}.content`) };
      return { role: 'user', content: [result] };
    }
    default:
      throw invalidBody(`${param}.role must be one of system, developer, user, assistant or tool.`, `${param}.role`);
  }
}

/**
 * An earlier turn's thinking, sent back as Claude requires (its text and signature unchanged)
 * when this provider made it; another vendor's reasoning is no thinking Claude can verify.
 */
function thinkingBlocks(message: Record<string, unknown>, provider: string): AnthropicRequestBlock[] {
  const signature = ownSignature(message.reasoning_signature, provider);
  if (signature === null) return [];
  return [{ type: 'thinking', thinking: typeof message.reasoning_content === 'string' ? message.reasoning_content : '', signature }];
}

function toolUseBlocks(toolCalls: unknown, param: string): AnthropicRequestBlock[] {
  if (toolCalls === undefined || toolCalls === null) return [];
  if (!Array.isArray(toolCalls)) throw invalidBody(`${param} must be an array.`, param);
  return toolCalls.map((call, index) => {
    const at = `${param}[${index}]`;
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || typeof call.id !== 'string' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw invalidBody(`${at} must have an id and a function with a name.`, at);
    }
    return { type: 'tool_use', id: call.id, name: fn.name, input: toolArgumentsObject(fn.arguments, `${at}.function.arguments`) };
  });
}

function toolsOf(tools: unknown): AnthropicTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalidBody('tools must be an array.', 'tools');
  return tools.map((tool, index) => {
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(tool) || tool.type !== 'function' || !isRecord(fn) || typeof fn.name !== 'string') {
      throw invalidBody(`tools[${index}] must be a function tool: {"type": "function", "function": {"name", "parameters"}}.`, `tools[${index}]`);
    }
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      input_schema: fn.parameters ?? { type: 'object', properties: {} },
      ...(fn.strict === true ? { strict: true } : {}),
    };
  });
}

function responseFormatTool(format: unknown): AnthropicTool | null {
  if (format === undefined || format === null) return null;
  if (!isRecord(format)) throw invalidBody('response_format must be an object.', 'response_format');
  if (format.type === 'text') return null;
  if (format.type === 'json_object') return { name: 'json_object', description: STRUCTURED_OUTPUT_DESCRIPTION, input_schema: { type: 'object' } };
  if (format.type === 'json_schema' && isRecord(format.json_schema)) {
    const { name, description, schema, strict } = format.json_schema;
    return {
      name: typeof name === 'string' ? name : 'structured_output',
      description: typeof description === 'string' ? description : STRUCTURED_OUTPUT_DESCRIPTION,
      input_schema: schema ?? { type: 'object' },
      // Asked strict: Anthropic's strict tool use enforces the schema, as OpenAI's strict mode does.
      ...(strict === true ? { strict: true } : {}),
    };
  }
  throw invalidBody('response_format must be {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "json_schema": {...}}.', 'response_format');
}

/** A `response_format` tool is always forced; otherwise OpenAI's tool_choice maps one to one. */
function toolChoiceOf(body: JsonObject, hasTools: boolean, structuredTool: AnthropicTool | null): { tool_choice?: AnthropicToolChoice } {
  if (!hasTools) return {};
  const singleCall = body.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (structuredTool !== null) return { tool_choice: { type: 'tool', name: structuredTool.name } };
  const choice = body.tool_choice;
  if (choice === undefined || choice === null || choice === 'auto') {
    return body.parallel_tool_calls === false ? { tool_choice: { type: 'auto', ...singleCall } } : {};
  }
  if (choice === 'none') return { tool_choice: { type: 'none' } };
  if (choice === 'required') return { tool_choice: { type: 'any', ...singleCall } };
  if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    return { tool_choice: { type: 'tool', name: choice.function.name, ...singleCall } };
  }
  throw invalidBody('tool_choice must be "auto", "none", "required" or {"type": "function", "function": {"name"}}.', 'tool_choice');
}
