/**
 * Money is counted in integer micro-USD wherever it is added up (limits, the request log), so
 * sums stay exact; USD floats appear only at the edges (pricing, API views).
 */
export const MICRO_PER_USD = 1_000_000;

export function usdToMicro(usd: number | null): number {
  return usd === null ? 0 : Math.round(usd * MICRO_PER_USD);
}

export function microToUsd(micro: number): number {
  return micro / MICRO_PER_USD;
}
