import { GatewayError } from '../../errors/index.js';
import { openAiUsage } from '../anthropic/index.js';
import type { ChatCompletionResult, JsonObject, TokenUsage } from '../../model-api/index.js';

export { openAiUsage };
import { stringifyProviderValue } from '../shared/provider-json.js';
import { tokenCount } from '../shared/token-count.js';
import { isRecord } from '../shared/message-content.js';

/** Converse's `usage` (inputTokens excludes the cache reads and writes, which it counts apart). */
export interface ConverseUsage {
  inputTokens?: unknown;
  outputTokens?: unknown;
  cacheReadInputTokens?: unknown;
  cacheWriteInputTokens?: unknown;
}

/** The usage in OpenAI's sense: prompt tokens include those read from and written to the cache. */
export function tokenUsageOf(usage: ConverseUsage | undefined): TokenUsage | null {
  if (usage === undefined) return null;
  const input = tokenCount(usage.inputTokens);
  const output = tokenCount(usage.outputTokens);
  if (input === null || output === null) return null;
  const cached = tokenCount(usage.cacheReadInputTokens);
  const written = tokenCount(usage.cacheWriteInputTokens);
  const prompt = input + (cached ?? 0) + (written ?? 0);
  return { promptTokens: prompt, completionTokens: output, totalTokens: prompt + output, cachedPromptTokens: cached, cacheWritePromptTokens: written };
}

/** Converse's stopReason as OpenAI's finish_reason. */
export function finishReasonOf(stopReason: unknown): string {
  switch (stopReason) {
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

export function malformedResponse(provider: string, reason: string): GatewayError {
  return new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', { logDetail: { provider, reason } });
}

/** A Converse response as an OpenAI `chat.completion`. */
export function toChatCompletion(provider: string, text: string, model: string, requestId: string | undefined, created: number): ChatCompletionResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw malformedResponse(provider, 'response body is not JSON');
  }
  const message = isRecord(body) && isRecord(body.output) && isRecord(body.output.message) ? body.output.message : undefined;
  if (!isRecord(body) || message === undefined || !Array.isArray(message.content)) throw malformedResponse(provider, 'response body has no output.message.content');
  let content = '';
  const toolCalls: JsonObject[] = [];
  for (const block of message.content as unknown[]) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') content += block.text;
    if (isRecord(block.toolUse) && typeof block.toolUse.name === 'string') {
      toolCalls.push({
        id: typeof block.toolUse.toolUseId === 'string' ? block.toolUse.toolUseId : `call_${toolCalls.length}`,
        type: 'function',
        function: { name: block.toolUse.name, arguments: stringifyProviderValue(block.toolUse.input ?? {}, 'tool input') },
      });
    }
  }
  const usage = tokenUsageOf(isRecord(body.usage) ? body.usage : undefined);
  return {
    completion: {
      id: `chatcmpl-${requestId ?? created}`,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: content.length > 0 || toolCalls.length === 0 ? content : null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
          finish_reason: finishReasonOf(body.stopReason),
        },
      ],
      ...(usage !== null ? { usage: openAiUsage(usage) } : {}),
    },
    usage,
  };
}
