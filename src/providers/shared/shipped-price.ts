import type { ShippedModel } from '../descriptor.js';

export type ShippedPrice = NonNullable<ShippedModel['pricing']>;

/** A per-token price of a shipped catalog entry: USD per 1M input, output and cached input tokens (and cache writes, where billed apart). */
export function perMillion(
  input: number,
  output: number | null,
  cachedInput: number | null,
  extras: { cacheWrite?: number; status?: 'documented' | 'docs_inferred' | 'short_context' | 'starts_at'; note?: string } = {},
): ShippedPrice {
  return {
    input_per_million: input,
    output_per_million: output,
    cached_input_per_million: cachedInput,
    cache_write_per_million: extras.cacheWrite ?? null,
    cache_write_1h_per_million: null,
    image_per_unit: null,
    audio_per_minute: null,
    status: extras.status ?? 'documented',
    note: extras.note ?? null,
    tiers: [],
  };
}
