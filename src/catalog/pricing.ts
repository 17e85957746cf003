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

/** Whether a model has any price: a pricing object with every unit null prices nothing. */
export function isPriced(pricing: ModelPricing | null): boolean {
  if (pricing === null) return false;
  return pricing.input_per_million !== null || pricing.output_per_million !== null || pricing.image_per_unit !== null || pricing.audio_per_minute !== null;
}
