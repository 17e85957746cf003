import type { ModelPricing, TokenPrices } from './types.js';

/**
 * The token prices for a prompt of `promptTokens` (all of it: cached, written to the cache and
 * not): those of the largest tier whose threshold the prompt passes, else the base prices.
 */
export function tokenPricesFor(pricing: ModelPricing, promptTokens: number): TokenPrices {
  let prices: TokenPrices = pricing;
  for (const tier of pricing.tiers) if (promptTokens > tier.above_prompt_tokens) prices = tier;
  return prices;
}
