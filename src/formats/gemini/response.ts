import type { ChatCompletionResult, JsonObject, TokenUsage } from '../../model-api/index.js';
import { toolInputOf } from '../estimate.js';

/** The Gemini API's finishReason for the internal call's finish_reason. */
export function finishReasonOf(finishReason: unknown): string {
  switch (finishReason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}

/** Thinking tokens of an answer, where the provider reported them apart (OpenAI's `completion_tokens_details`). */
export function reasoningTokensOf(usage: unknown): number {
  const details = (usage as { completion_tokens_details?: { reasoning_tokens?: unknown } } | null | undefined)?.completion_tokens_details;
  return typeof details?.reasoning_tokens === 'number' ? details.reasoning_tokens : 0;
}

/**
 * Usage in the Gemini API's words: `promptTokenCount` with the cached tokens in it
 * (`cachedContentTokenCount`), `candidatesTokenCount` the answer without its thinking
 * (`thoughtsTokenCount`), and the total.
 */
export function usageMetadataOf(usage: TokenUsage | null, reasoning: number): JsonObject {
  const prompt = usage?.promptTokens ?? 0;
  const completion = usage?.completionTokens ?? 0;
  const thoughts = Math.min(reasoning, completion);
  const metadata: JsonObject = { promptTokenCount: prompt, candidatesTokenCount: completion - thoughts, totalTokenCount: usage?.totalTokens ?? prompt + completion };
  if (usage?.cachedPromptTokens !== null && usage?.cachedPromptTokens !== undefined && usage.cachedPromptTokens > 0) metadata.cachedContentTokenCount = usage.cachedPromptTokens;
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  return metadata;
}

interface ChatToolCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/** A tool call of the internal answer as a `functionCall` part: its id kept, so a function response can name it. */
export function functionCallPart(call: ChatToolCall): JsonObject {
  return { functionCall: { id: String(call.id ?? ''), name: String(call.function?.name ?? ''), args: toolInputOf(call.function?.arguments) } };
}

/** The id a translated answer carries as `responseId`: the provider's completion id. */
export function responseIdOf(completion: JsonObject): string {
  return typeof completion.id === 'string' ? completion.id : '';
}

/** The internal chat.completion as a GenerateContentResponse: a candidate per choice (thoughts, text, then function calls), usage, the caller's model. */
export function encodeGeminiResponse(result: ChatCompletionResult, model: string): JsonObject {
  const { completion } = result;
  const choices = (Array.isArray(completion.choices) ? completion.choices : []) as { index?: unknown; message?: JsonObject; finish_reason?: unknown }[];
  const candidates = choices.map((choice, position) => {
    const message = choice.message ?? {};
    const parts: JsonObject[] = [];
    if (typeof message.reasoning_content === 'string' && message.reasoning_content.length > 0) parts.push({ text: message.reasoning_content, thought: true });
    const text = [message.content, message.refusal].filter((part): part is string => typeof part === 'string' && part.length > 0).join('');
    if (text.length > 0) parts.push({ text });
    for (const call of (Array.isArray(message.tool_calls) ? message.tool_calls : []) as ChatToolCall[]) parts.push(functionCallPart(call));
    return { content: { parts, role: 'model' }, finishReason: finishReasonOf(choice.finish_reason), index: typeof choice.index === 'number' ? choice.index : position };
  });
  return {
    candidates,
    usageMetadata: usageMetadataOf(result.usage, reasoningTokensOf(completion.usage)),
    modelVersion: model,
    responseId: responseIdOf(completion),
  };
}
