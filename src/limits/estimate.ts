import { tokenPricesFor, type ModelPricing } from '../catalog/index.js';
import type { UsageEstimate } from './types.js';

/** Reply budget assumed when the caller sets no max_tokens. */
export const ASSUMED_REPLY_TOKENS = 1024;

/**
 * What a token-priced call is expected to use: the prompt at ≈ 4 bytes a token, plus the
 * reply budget (max_tokens, or the assumed one) of each of `choices` replies, priced with the
 * model's catalog prices for that prompt size (null when it has none).
 */
export function estimateTokens(pricing: ModelPricing | null, promptBytes: number, replyTokens: number | null, choices = 1): UsageEstimate {
  const prompt = Math.ceil(Math.max(0, promptBytes) / 4);
  const reply = (replyTokens ?? ASSUMED_REPLY_TOKENS) * choices;
  // A long prompt reserves at its tier's prices.
  const prices = pricing === null ? null : tokenPricesFor(pricing, prompt);
  const input = prices?.input_per_million ?? null;
  const output = prices?.output_per_million ?? null;
  const costUsd = input === null ? null : (prompt * input + reply * (output ?? 0)) / 1_000_000;
  return { tokens: prompt + reply, costUsd };
}

/** What an image generation is expected to use: its prompt's tokens, and `count` images at the per-image price. */
export function estimateImages(pricing: ModelPricing | null, prompt: string, count: number): UsageEstimate {
  const price = pricing?.image_per_unit ?? null;
  return { tokens: Math.ceil(prompt.length / 4), costUsd: price === null ? null : price * count };
}
