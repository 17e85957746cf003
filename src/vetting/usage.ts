import type { TokenUsage } from '../model-api/index.js';

export function emptyUsage(): TokenUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedPromptTokens: null };
}

/** Adds a call's usage; a provider that reported none adds nothing. */
export function addUsage(total: TokenUsage, usage: TokenUsage | null): TokenUsage {
  if (usage === null) return total;
  return {
    promptTokens: total.promptTokens + usage.promptTokens,
    completionTokens: total.completionTokens + usage.completionTokens,
    totalTokens: total.totalTokens + usage.totalTokens,
    cachedPromptTokens:
      usage.cachedPromptTokens === null && total.cachedPromptTokens === null
        ? null
        : (total.cachedPromptTokens ?? 0) + (usage.cachedPromptTokens ?? 0),
  };
}
