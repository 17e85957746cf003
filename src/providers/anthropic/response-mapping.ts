import { stringifyProviderValue } from '../shared/provider-json.js';
import { tokenCount } from '../shared/token-count.js';
import type { ChatCompletionResult, JsonObject, ReasoningMembers, TokenUsage } from '../../model-api/index.js';
import { signatureOf } from '../shared/signatures.js';
import type { AnthropicResponse, AnthropicUsage } from './wire.js';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * Anthropic stop reasons in OpenAI's terms. A refusal is the provider's own safety block
 * (content_filter); the forced `response_format` tool finishing is a normal stop. pause_turn
 * comes only from server tools, which the adapter never sends (docs/providers-anthropic.md).
 */
export function finishReasonOf(stopReason: string | null | undefined, structuredOutputCalled: boolean): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return structuredOutputCalled ? 'stop' : 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * Anthropic counts cache reads and cache writes apart from `input_tokens`; the prompt is all
 * three, and the writes are kept apart too (they are priced apart). A usage without any count is "not reported" (null), never zero.
 */
export function tokenUsageOf(usage: AnthropicUsage | undefined): TokenUsage | null {
  if (usage === undefined) return null;
  const input = tokenCount(usage.input_tokens);
  const output = tokenCount(usage.output_tokens);
  if (input === null && output === null) return null;
  const cacheRead = tokenCount(usage.cache_read_input_tokens);
  const cacheWrite = tokenCount(usage.cache_creation_input_tokens);
  const promptTokens = (input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
  const completionTokens = output ?? 0;
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedPromptTokens: cacheRead,
    // Writes cost more than input (1.25×, 2× for 1-hour entries): kept apart for the cost.
    cacheWritePromptTokens: cacheWrite,
    cacheWrite1hPromptTokens: tokenCount(usage.cache_creation?.ephemeral_1h_input_tokens),
  };
}

/** OpenAI's `usage` object for a TokenUsage. */
export function openAiUsage(usage: TokenUsage): JsonObject {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedPromptTokens !== null ? { prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens } } : {}),
  };
}

/**
 * An Anthropic message as an OpenAI `chat.completion`: text, tool calls, and its thinking as the
 * reasoning members (text joined, the last signature, marked as this provider's). Redacted
 * thinking and server tool blocks (web search) stay Anthropic's: the answer's text carries what
 * they gave.
 */
export function toChatCompletion(message: AnthropicResponse, structuredOutputTool: string | null, created: number, provider: string): ChatCompletionResult {
  const structured = message.content.find((block) => block.type === 'tool_use' && block.name === structuredOutputTool);
  const text = message.content.flatMap((block) => (block.type === 'text' && block.text !== undefined ? [block.text] : [])).join('');
  const thinking = message.content.filter((block) => block.type === 'thinking');
  const reasoning: ReasoningMembers = {};
  if (thinking.length > 0) reasoning.reasoning_content = thinking.map((block) => block.thinking ?? '').join('\n\n');
  const signature = thinking.at(-1)?.signature;
  if (signature !== undefined && signature.length > 0) reasoning.reasoning_signature = signatureOf(provider, signature);
  const toolCalls = message.content.flatMap((block) =>
    block.type === 'tool_use' && block.name !== structuredOutputTool
      ? [{ id: block.id, type: 'function', function: { name: block.name, arguments: stringifyProviderValue(block.input ?? {}, 'tool_use input') } }]
      : [],
  );
  const content = structured !== undefined ? stringifyProviderValue(structured.input ?? {}, 'tool_use input') : text.length > 0 ? text : null;
  const usage = tokenUsageOf(message.usage);
  const completion: JsonObject = {
    id: message.id,
    object: 'chat.completion',
    created,
    model: message.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, ...reasoning, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finishReasonOf(message.stop_reason, structured !== undefined),
      },
    ],
    ...(usage !== null ? { usage: openAiUsage(usage) } : {}),
  };
  return { completion, usage };
}

/** message_delta counts are cumulative and may repeat or omit message_start's: the later count wins. */
export function combineUsage(start: AnthropicUsage | undefined, end: AnthropicUsage | undefined): AnthropicUsage | undefined {
  if (start === undefined || end === undefined) return end ?? start;
  const pick = (key: Exclude<keyof AnthropicUsage, 'cache_creation'>) => (typeof end[key] === 'number' ? end[key] : start[key]);
  return {
    input_tokens: pick('input_tokens'),
    output_tokens: pick('output_tokens'),
    cache_read_input_tokens: pick('cache_read_input_tokens'),
    cache_creation_input_tokens: pick('cache_creation_input_tokens'),
    cache_creation: end.cache_creation ?? start.cache_creation,
  };
}
