import { tokenPricesFor, type ModelPricing } from '../catalog/index.js';
import type { TokenUsage } from '../model-api/index.js';

export interface CostInput {
  /** The catalog pricing of the resolved model; null when it has none (inferred models too). */
  pricing: ModelPricing | null;
  usage: TokenUsage | null;
  imageCount: number | null;
  /** Audio duration supplied by the caller or returned by the provider. */
  audioSeconds: number | null;
  /**
   * The request got an answer, whole or in part (a stream the client left after the provider
   * began answering): something was used even if nothing was measured.
   */
  succeeded: boolean;
}

export interface Cost {
  /** Integer micro-USD; null when the model has no pricing or nothing used could be priced. */
  microUsd: number | null;
  /** The price applied is a "starts at" price (pricing status `starts_at`). */
  startingPrice: boolean;
}

// Prices are USD per million tokens, per image and per minute. Scaled to integer pico-USD
// (1e-12) they multiply exactly; the total is rounded half-up to the micro-dollar once.
const PICO_PER_USD = 1_000_000_000_000n;
const PICO_PER_MICRO = 1_000_000n;

function picoPerToken(perMillion: number): bigint {
  return BigInt(Math.round(perMillion * 1_000_000));
}

function picoPerUnit(usd: number): bigint {
  return BigInt(Math.round(usd * Number(PICO_PER_USD)));
}

/** Pico-USD of `tokens` at a price per million; null when there are tokens but no price. */
function tokensAt(tokens: number, perMillion: number | null): bigint | null {
  if (tokens === 0) return 0n;
  // Whole: every adapter reads counts with tokenCount (BigInt throws on a fraction).
  return perMillion === null ? null : BigInt(tokens) * picoPerToken(perMillion);
}

/**
 * Pico-USD of the tokens, or null when a token count has no price to apply. The prompt is
 * split into tokens read from the cache, written to it (1-hour entries apart) and the rest;
 * the prices are those of the prompt's size (a tier, for a long prompt).
 */
function tokenCost(pricing: ModelPricing, usage: TokenUsage): bigint | null {
  const prices = tokenPricesFor(pricing, usage.promptTokens);
  const input = prices.input_per_million;
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  const written = Math.min(usage.cacheWritePromptTokens ?? 0, usage.promptTokens - cached);
  const writtenForAnHour = Math.min(usage.cacheWrite1hPromptTokens ?? 0, written);
  const cacheWrite = prices.cache_write_per_million ?? input;
  const parts = [
    tokensAt(usage.promptTokens - cached - written, input),
    tokensAt(cached, prices.cached_input_per_million ?? input),
    tokensAt(written - writtenForAnHour, cacheWrite),
    tokensAt(writtenForAnHour, prices.cache_write_1h_per_million ?? cacheWrite),
    tokensAt(usage.completionTokens, prices.output_per_million),
  ];
  let sum = 0n;
  for (const part of parts) {
    if (part === null) return null;
    sum += part;
  }
  return sum;
}

/**
 * The cost of one request from the catalog's pricing: input, cached input, cache-write and
 * output tokens at the prices of the prompt's size; images per unit; audio per minute only with a known duration. Parts that were used
 * but have no price are left out; when nothing used could be priced the cost is null.
 */
export function computeCost(input: CostInput): Cost {
  const { pricing, usage, imageCount, audioSeconds, succeeded } = input;
  if (pricing === null) return { microUsd: null, startingPrice: false };
  const priced: bigint[] = [];
  let used = false;

  if (usage !== null && usage.promptTokens + usage.completionTokens > 0) {
    used = true;
    const tokens = tokenCost(pricing, usage);
    if (tokens !== null) priced.push(tokens);
  }
  if (imageCount !== null && imageCount > 0) {
    used = true;
    if (pricing.image_per_unit !== null) priced.push(picoPerUnit(pricing.image_per_unit) * BigInt(imageCount));
  }
  if (pricing.audio_per_minute !== null && audioSeconds !== null && audioSeconds > 0) {
    used = true;
    const milliseconds = BigInt(Math.round(audioSeconds * 1000));
    priced.push((picoPerUnit(pricing.audio_per_minute) * milliseconds) / 60_000n);
  }

  // Refused before anything was used: zero. Answered without a measure (no usage, no
  // duration): unknown, so null rather than a made-up zero.
  if (!used) return { microUsd: succeeded ? null : 0, startingPrice: false };
  if (priced.length === 0) return { microUsd: null, startingPrice: false };
  const pico = priced.reduce((sum, part) => sum + part, 0n);
  const micro = (pico + PICO_PER_MICRO / 2n) / PICO_PER_MICRO;
  return { microUsd: Number(micro), startingPrice: pricing.status === 'starts_at' };
}

/**
 * The cost of a request that used several models (VETTING drafts and verifies on two): the
 * sum of each part's cost; null when no part could be priced.
 */
export function computeCombinedCost(parts: readonly CostInput[]): Cost {
  const costs = parts.map(computeCost);
  const priced = costs.filter((cost) => cost.microUsd !== null);
  if (priced.length === 0) return { microUsd: null, startingPrice: false };
  return {
    microUsd: priced.reduce((sum, cost) => sum + cost.microUsd!, 0),
    startingPrice: priced.some((cost) => cost.startingPrice),
  };
}
