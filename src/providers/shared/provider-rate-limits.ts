/** Response headers that give a provider's remaining request budget and its size (OpenAI's and compatible servers', Anthropic's). */
const BUDGET_HEADERS = [
  ['x-ratelimit-remaining-requests', 'x-ratelimit-limit-requests'],
  ['anthropic-ratelimit-requests-remaining', 'anthropic-ratelimit-requests-limit'],
] as const;

function numberOf(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const number = text === undefined ? Number.NaN : Number(text);
  return Number.isFinite(number) ? number : undefined;
}

/**
 * What share of its request rate limit a provider said was left (0…1), from a response's
 * headers; undefined when they say nothing. Routing prefers the deployment with the most left.
 */
export function rateLimitShareOf(headers: Record<string, string | string[] | undefined>): number | undefined {
  for (const [remainingName, limitName] of BUDGET_HEADERS) {
    const remaining = numberOf(headers[remainingName]);
    const limit = numberOf(headers[limitName]);
    if (remaining !== undefined && limit !== undefined && limit > 0) return Math.min(1, Math.max(0, remaining / limit));
  }
  return undefined;
}
