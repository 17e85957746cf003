import { randomUUID } from 'node:crypto';
import { stringifyProviderValue } from '../shared/provider-json.js';
import { signatureOf } from '../shared/signatures.js';
import { tokenCount } from '../shared/token-count.js';
import type { JsonObject, TokenUsage } from '../../model-api/index.js';
import { finishReasonOf } from './finish-reasons.js';
import type { GeminiCandidate, GeminiResponsePart, GeminiUsageMetadata, GenerateContentResponse } from './wire.js';

/*
 * Gemini generateContent response → OpenAI `chat.completion`: candidates become choices,
 * text parts the message content (thought summaries left out), functionCall parts tool_calls
 * with JSON-string arguments, finishReason the OpenAI finish_reason (finish-reasons.ts) and
 * usageMetadata the usage.
 */

/** Token usage, or null when Gemini reported none ("not reported" is not zero). */
export function usageOf(metadata: GeminiUsageMetadata | undefined): TokenUsage | null {
  if (metadata === undefined) return null;
  const prompt = tokenCount(metadata.promptTokenCount);
  const total = tokenCount(metadata.totalTokenCount);
  if (prompt === null && total === null) return null;
  // Tool-use prompt tokens are input, thinking tokens are billed as output (OpenAI counts reasoning in completion_tokens).
  const promptTokens = (prompt ?? 0) + (tokenCount(metadata.toolUsePromptTokenCount) ?? 0);
  const completionTokens = (tokenCount(metadata.candidatesTokenCount) ?? 0) + (tokenCount(metadata.thoughtsTokenCount) ?? 0);
  return {
    promptTokens,
    completionTokens,
    totalTokens: total ?? promptTokens + completionTokens,
    cachedPromptTokens: tokenCount(metadata.cachedContentTokenCount),
  };
}

/** The OpenAI `usage` object of a TokenUsage. */
export function openAiUsage(usage: TokenUsage, metadata: GeminiUsageMetadata | undefined): JsonObject {
  const result: JsonObject = { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.totalTokens };
  if (usage.cachedPromptTokens !== null) result.prompt_tokens_details = { cached_tokens: usage.cachedPromptTokens };
  const reasoning = tokenCount(metadata?.thoughtsTokenCount);
  if (reasoning !== null) result.completion_tokens_details = { reasoning_tokens: reasoning };
  return result;
}

export function completionId(response: GenerateContentResponse): string {
  return `chatcmpl-${response.responseId ?? randomUUID().replaceAll('-', '')}`;
}

/** The answer text of some parts; thought summaries are not part of the answer. */
export function answerText(parts: readonly GeminiResponsePart[]): string {
  return parts
    .filter((part) => part.thought !== true && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

/** The thought summaries of some parts (sent when the caller asked to see the reasoning: includeThoughts). */
export function thoughtText(parts: readonly GeminiResponsePart[]): string {
  return parts
    .filter((part) => part.thought === true && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

/**
 * An OpenAI tool call of a functionCall part. Gemini has ids only on some models, so one is
 * made up when missing; a thought signature travels in `extra_content.google` (the field
 * Google's own OpenAI-compatible endpoint uses) so the client can send it back.
 */
export function toolCallOf(part: GeminiResponsePart): JsonObject | null {
  if (part.functionCall === undefined) return null;
  const call: JsonObject = {
    id: part.functionCall.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    type: 'function',
    function: { name: part.functionCall.name, arguments: stringifyProviderValue(part.functionCall.args ?? {}, 'functionCall args') },
  };
  if (part.thoughtSignature !== undefined) call.extra_content = { google: { thought_signature: part.thoughtSignature } };
  return call;
}

/**
 * The turn's thought signature as the gateway's reasoning signature (`<provider>:<signature>`),
 * or null: the first part's that has one, which on a turn with function calls is the first
 * call's — the one Gemini 3 requires back. Through the Messages and Responses APIs it travels
 * as the reasoning's signature (a thinking block, a reasoning item), which their clients send
 * back as received; a tool call's `extra_content` is the chat completions' carrier.
 */
export function turnSignatureOf(parts: readonly GeminiResponsePart[], provider: string): string | null {
  const signature = parts.find((part) => part.thoughtSignature !== undefined && part.thoughtSignature.length > 0)?.thoughtSignature;
  return signature === undefined ? null : signatureOf(provider, signature);
}

export function toolCallsOf(parts: readonly GeminiResponsePart[]): JsonObject[] {
  return parts.map(toolCallOf).filter((call): call is JsonObject => call !== null);
}

function choiceOf(candidate: GeminiCandidate, position: number, provider: string): JsonObject {
  const parts = candidate.content?.parts ?? [];
  const toolCalls = toolCallsOf(parts);
  const text = answerText(parts);
  const message: JsonObject = { role: 'assistant', content: text.length === 0 && toolCalls.length > 0 ? null : text, refusal: null };
  const thoughts = thoughtText(parts);
  if (thoughts.length > 0) message.reasoning_content = thoughts;
  const signature = turnSignatureOf(parts, provider);
  if (signature !== null) message.reasoning_signature = signature;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    index: candidate.index ?? position,
    message,
    // A candidate without a finishReason in a complete response is treated as a normal end.
    finish_reason: finishReasonOf(candidate.finishReason ?? 'STOP', { calledTools: toolCalls.length > 0, hasContent: text.length > 0 }, provider),
    logprobs: null,
  };
}

/** A prompt blocked by safety has no candidates: one empty choice with finish_reason content_filter. */
function blockedChoice(): JsonObject {
  return { index: 0, message: { role: 'assistant', content: '', refusal: null }, finish_reason: 'content_filter', logprobs: null };
}

/** Throws the GatewayError of a candidate that ended without an answer (finish-reasons.ts). */
export function toChatCompletion(
  response: GenerateContentResponse,
  upstreamModel: string,
  provider: string,
): { completion: JsonObject; usage: TokenUsage | null } {
  const candidates = response.candidates ?? [];
  const usage = usageOf(response.usageMetadata);
  const completion: JsonObject = {
    id: completionId(response),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: upstreamModel,
    choices: candidates.length > 0 ? candidates.map((candidate, position) => choiceOf(candidate, position, provider)) : [blockedChoice()],
  };
  if (usage !== null) completion.usage = openAiUsage(usage, response.usageMetadata);
  return { completion, usage };
}
