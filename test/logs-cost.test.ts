import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_CATALOG, type ModelPricing } from '../src/catalog/index.js';
import { estimateTokens } from '../src/limits/estimate.js';
import { computeCost } from '../src/logs/index.js';

function pricing(units: Partial<ModelPricing>): ModelPricing {
  return {
    input_per_million: null,
    output_per_million: null,
    cached_input_per_million: null,
    cache_write_per_million: null,
    cache_write_1h_per_million: null,
    image_per_unit: null,
    audio_per_minute: null,
    tiers: [],
    status: 'documented',
    note: null,
    ...units,
  };
}

const usage = (promptTokens: number, completionTokens: number, cachedPromptTokens: number | null = null) => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
  cachedPromptTokens,
});
const NOTHING = { usage: null, imageCount: null, audioSeconds: null, succeeded: true };

describe('cost from the catalog pricing', () => {
  test('input, cached input and output tokens, exact to the micro-dollar', () => {
    // gpt-4o-mini prices: 1,000,000 prompt tokens of which 400,000 cached, 10,000 output.
    const cost = computeCost({ ...NOTHING, pricing: pricing({ input_per_million: 0.15, cached_input_per_million: 0.075, output_per_million: 0.6 }), usage: usage(1_000_000, 10_000, 400_000) });
    // 600,000 × 0.15 + 400,000 × 0.075 + 10,000 × 0.6 micro-USD = 90,000 + 30,000 + 6,000
    assert.deepEqual(cost, { microUsd: 126_000, startingPrice: false });
  });

  test('floating-point prices do not drift: 0.1 + 0.2 style sums stay exact', () => {
    // 3 × 0.1 µ$ + 3 × 0.2 µ$ = 0.9 µ$ → rounds to 1 (half-up), never 0.8999…
    const cost = computeCost({ ...NOTHING, pricing: pricing({ input_per_million: 0.1, output_per_million: 0.2 }), usage: usage(3, 3) });
    assert.equal(cost.microUsd, 1);
    const many = computeCost({ ...NOTHING, pricing: pricing({ input_per_million: 0.1, output_per_million: 0.2 }), usage: usage(7_000_001, 3_000_003) });
    // 700,000.1 + 600,000.6 = 1,300,000.7 → 1,300,001
    assert.equal(many.microUsd, 1_300_001);
  });

  test('cached tokens fall back to the input price when no cached price is listed', () => {
    const cost = computeCost({ ...NOTHING, pricing: pricing({ input_per_million: 2, output_per_million: 8 }), usage: usage(1000, 0, 500) });
    assert.equal(cost.microUsd, 2000);
  });

  test('images per unit, flagged when the price is a starting price', () => {
    const starting = computeCost({ ...NOTHING, pricing: pricing({ image_per_unit: 0.04, status: 'starts_at' }), imageCount: 3 });
    assert.deepEqual(starting, { microUsd: 120_000, startingPrice: true });
    const exact = computeCost({ ...NOTHING, pricing: pricing({ image_per_unit: 0.04 }), imageCount: 2 });
    assert.deepEqual(exact, { microUsd: 80_000, startingPrice: false });
  });

  test('audio per minute only when a duration is known', () => {
    const withDuration = computeCost({ ...NOTHING, pricing: pricing({ audio_per_minute: 0.006 }), audioSeconds: 90 });
    assert.equal(withDuration.microUsd, 9000);
    const fractional = computeCost({ ...NOTHING, pricing: pricing({ audio_per_minute: 0.006 }), audioSeconds: 12.345 });
    assert.equal(fractional.microUsd, 1235); // 1234.5 µ$ rounds half-up
    const withoutDuration = computeCost({ ...NOTHING, pricing: pricing({ audio_per_minute: 0.006 }) });
    assert.equal(withoutDuration.microUsd, null);
  });

  test('null without pricing (unpriced or inferred models)', () => {
    assert.deepEqual(computeCost({ ...NOTHING, pricing: null, usage: usage(10, 10) }), { microUsd: null, startingPrice: false });
  });

  test('null when what was used has no price; zero when a priced request used nothing', () => {
    assert.equal(computeCost({ ...NOTHING, pricing: pricing({ image_per_unit: 0.04 }), usage: usage(10, 0) }).microUsd, null);
    assert.equal(computeCost({ ...NOTHING, pricing: pricing({ input_per_million: 1, output_per_million: 2 }), succeeded: false }).microUsd, 0);
    // Answered, but the provider reported no usage: unknown, not zero.
    assert.equal(computeCost({ ...NOTHING, pricing: pricing({ input_per_million: 1, output_per_million: 2 }) }).microUsd, null);
  });
});

describe('cost of cache writes and long prompts', () => {
  const sonnet = DEFAULT_CATALOG.models.find((model) => model.id === 'claude-sonnet-4-5')!.pricing!;
  const geminiPro = DEFAULT_CATALOG.models.find((model) => model.id === 'gemini-2.5-pro')!.pricing!;
  const withWrites = (promptTokens: number, completionTokens: number, cached: number, written: number, writtenForAnHour: number) => ({
    ...usage(promptTokens, completionTokens, cached),
    cacheWritePromptTokens: written,
    cacheWrite1hPromptTokens: writtenForAnHour,
  });

  test('Anthropic cache writes cost 1.25× input (5-minute entries) and 2× (1-hour entries), reads 0.1×', () => {
    // claude-sonnet-4-5: 100,000 prompt tokens = 10,000 read + 30,000 written (10,000 of them for an hour) + 60,000 plain; 1,000 output.
    const cost = computeCost({ ...NOTHING, pricing: sonnet, usage: withWrites(100_000, 1_000, 10_000, 30_000, 10_000) });
    // 60,000 × 3 + 10,000 × 0.3 + 20,000 × 3.75 + 10,000 × 6 + 1,000 × 15 micro-USD
    assert.equal(cost.microUsd, 180_000 + 3_000 + 75_000 + 60_000 + 15_000);
  });

  test('without a cache-write price, writes cost input; without a 1-hour price, the 5-minute one', () => {
    const plain = pricing({ input_per_million: 2, output_per_million: 8 });
    assert.equal(computeCost({ ...NOTHING, pricing: plain, usage: withWrites(1_000, 0, 0, 600, 100) }).microUsd, 2_000);
    const fiveMinuteOnly = pricing({ input_per_million: 2, output_per_million: 8, cache_write_per_million: 2.5 });
    // 400 × 2 + 600 × 2.5
    assert.equal(computeCost({ ...NOTHING, pricing: fiveMinuteOnly, usage: withWrites(1_000, 0, 0, 600, 100) }).microUsd, 800 + 1_500);
  });

  test('reported counts past the prompt are bounded by it: never more tokens priced than the prompt holds', () => {
    const cost = computeCost({ ...NOTHING, pricing: sonnet, usage: withWrites(1_000, 0, 800, 900, 900) });
    // 800 read + 200 written for an hour: 800 × 0.3 + 200 × 6
    assert.equal(cost.microUsd, 240 + 1_200);
  });

  test('Gemini 2.5 Pro: prompts up to 200k tokens at the base prices, longer ones at the tier\'s, output included', () => {
    const at = (promptTokens: number, cached = 0) => computeCost({ ...NOTHING, pricing: geminiPro, usage: usage(promptTokens, 10_000, cached) }).microUsd;
    // 200,000 × 1.25 + 10,000 × 10
    assert.equal(at(200_000), 250_000 + 100_000);
    // 200,001 × 2.5 + 10,000 × 15 = 500,002.5 + 150,000, half-up
    assert.equal(at(200_001), 650_003);
    // cached tokens at the tier's cache price: 150,000 × 2.5 + 100,000 × 0.25 + 10,000 × 15
    assert.equal(at(250_000, 100_000), 375_000 + 25_000 + 150_000);
  });

  test('the largest tier the prompt passes applies', () => {
    const tiered = pricing({
      input_per_million: 1,
      output_per_million: 1,
      tiers: [
        { above_prompt_tokens: 100, input_per_million: 2, output_per_million: 2, cached_input_per_million: null, cache_write_per_million: null, cache_write_1h_per_million: null },
        { above_prompt_tokens: 1_000, input_per_million: 3, output_per_million: 3, cached_input_per_million: null, cache_write_per_million: null, cache_write_1h_per_million: null },
      ],
    });
    const at = (promptTokens: number) => computeCost({ ...NOTHING, pricing: tiered, usage: usage(promptTokens, 0) }).microUsd;
    assert.deepEqual([at(100_000 / 1_000), at(500), at(2_000)], [100, 1_000, 6_000]);
  });

  test('a reservation estimates a long prompt at its tier\'s prices', () => {
    // 1,000,000 bytes ≈ 250,000 tokens, over Gemini 2.5 Pro's 200k: 250,000 × 2.5 + 1,000 × 15 micro-USD.
    assert.equal(estimateTokens(geminiPro, 1_000_000, 1_000).costUsd, (250_000 * 2.5 + 1_000 * 15) / 1_000_000);
  });
});
