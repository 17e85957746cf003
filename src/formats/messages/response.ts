import type { ChatCompletionResult, JsonObject, TokenUsage } from '../../model-api/index.js';
import { toolInputOf } from '../estimate.js';

/** Anthropic's stop reasons for the internal call's finish reasons. */
export function stopReasonOf(finishReason: unknown): string {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * Usage in the Messages API's words: `input_tokens` are the prompt tokens neither read from
 * nor written to the cache (the internal count holds all three), zeros when none was reported.
 */
export function messagesUsageOf(usage: TokenUsage | null): JsonObject {
  const cacheRead = usage?.cachedPromptTokens ?? 0;
  const cacheWrite = usage?.cacheWritePromptTokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.promptTokens ?? 0) - cacheRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: usage?.completionTokens ?? 0,
  };
}

interface ChatToolCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** The internal chat.completion as a Messages API message: the model's reasoning as a thinking block, text, then tool_use blocks with their inputs parsed. */
export function encodeMessagesResponse(result: ChatCompletionResult, model: string): JsonObject {
  const { completion } = result;
  const choice = (Array.isArray(completion.choices) ? completion.choices[0] : undefined) as { message?: JsonObject; finish_reason?: unknown } | undefined;
  const message = choice?.message ?? {};
  const content: JsonObject[] = [];
  const thinking = typeof message.reasoning_content === 'string' ? message.reasoning_content : '';
  const signature = typeof message.reasoning_signature === 'string' ? message.reasoning_signature : '';
  if (thinking.length > 0 || signature.length > 0) content.push({ type: 'thinking', thinking, signature });
  const text = [message.content, message.refusal].filter((part): part is string => typeof part === 'string' && part.length > 0).join('');
  if (text.length > 0) content.push({ type: 'text', text });
  for (const call of (Array.isArray(message.tool_calls) ? message.tool_calls : []) as ChatToolCall[]) {
    content.push({ type: 'tool_use', id: String(call.id ?? ''), name: String(call.function?.name ?? ''), input: toolInputOf(call.function?.arguments) });
  }
  return {
    id: typeof completion.id === 'string' ? completion.id : '',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsageOf(result.usage),
  };
}
