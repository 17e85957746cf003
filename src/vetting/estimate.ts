import type { ModelPricing } from '../catalog/index.js';
import { ASSUMED_REPLY_TOKENS, type UsageEstimate } from '../limits/index.js';

/**
 * What the limiter reserves before the first provider call: the prompt once (≈ 4 characters a
 * token) plus, per attempt, a draft and a verification of at most the reply budget. The cost
 * uses the dearest price of the models involved; null when one of them has no price.
 */
export function estimateVettingUsage(options: {
  promptCharacters: number;
  maxTokens: number | undefined;
  attempts: number;
  pricing: readonly (ModelPricing | null)[];
}): UsageEstimate {
  const promptTokens = Math.ceil(options.promptCharacters / 4);
  const replyTokens = (options.maxTokens ?? ASSUMED_REPLY_TOKENS) * options.attempts * 2;
  const inputPrices = options.pricing.map((pricing) => pricing?.input_per_million ?? null);
  const outputPrices = options.pricing.map((pricing) => pricing?.output_per_million ?? null);
  const priced = [...inputPrices, ...outputPrices].every((price) => price !== null);
  const costUsd = priced
    ? (promptTokens * Math.max(...(inputPrices as number[])) + replyTokens * Math.max(...(outputPrices as number[]))) / 1_000_000
    : null;
  return { tokens: promptTokens + replyTokens, costUsd };
}
