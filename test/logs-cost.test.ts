import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelPricing } from '../src/catalog/index.js';
import { computeCost } from '../src/logs/index.js';

function pricing(units: Partial<ModelPricing>): ModelPricing {
  return {
    input_per_million: null,
    output_per_million: null,
    cached_input_per_million: null,
    image_per_unit: null,
    audio_per_minute: null,
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
