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
 * What share of its request rate limit a provider said was left, on the calls of the requests
 * that asked (routing prefers the deployment with the most left). Only watched requests are
 * noted: a call nobody routes costs one map lookup.
 */
export class ProviderRateLimits {
  private readonly watched = new Map<string, number | null>();

  /** Notes the budget of the next call made for `requestId`. */
  watch(requestId: string): void {
    this.watched.set(requestId, null);
  }

  note(requestId: string, headers: Record<string, string | string[] | undefined>): void {
    if (!this.watched.has(requestId)) return;
    for (const [remainingName, limitName] of BUDGET_HEADERS) {
      const remaining = numberOf(headers[remainingName]);
      const limit = numberOf(headers[limitName]);
      if (remaining !== undefined && limit !== undefined && limit > 0) {
        this.watched.set(requestId, Math.min(1, Math.max(0, remaining / limit)));
        return;
      }
    }
  }

  /** The share left that the call reported (0…1), or null when it said nothing; stops watching. */
  take(requestId: string): number | null {
    const share = this.watched.get(requestId) ?? null;
    this.watched.delete(requestId);
    return share;
  }
}
