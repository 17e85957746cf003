import { GatewayError } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import type { ActualUsage, Admission, Limiter, UsageEstimate } from './types.js';
import { dayWindow, minuteWindow, monthWindow, rateLimitHeaders } from './windows.js';

interface Counter {
  window: string | number;
  value: number;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const UNLIMITED: Admission = { headers: NO_HEADERS, settle: async () => undefined };

/** Adds `amount` to a windowed counter, starting over when the window changed. */
function bump(counters: Map<string, Counter>, key: string, window: string | number, amount: number): number {
  const counter = counters.get(key);
  if (counter === undefined || counter.window !== window) {
    counters.set(key, { window, value: amount });
    return amount;
  }
  counter.value += amount;
  return counter.value;
}

function current(counters: Map<string, Counter>, key: string, window: string | number): number {
  const counter = counters.get(key);
  return counter !== undefined && counter.window === window ? counter.value : 0;
}

/**
 * Limits kept in this process. Check and reserve happen in one synchronous step, so
 * concurrent requests of one process cannot overshoot a cap.
 */
export class InMemoryLimiter implements Limiter {
  private readonly requests = new Map<string, Counter>();
  private readonly tokens = new Map<string, Counter>();
  private readonly costs = new Map<string, Counter>();

  constructor(private readonly now: () => number = Date.now) {}

  async admit(principal: Principal, estimate: UsageEstimate): Promise<Admission> {
    if (principal.kind !== 'key') return UNLIMITED;
    const { rpm, dailyTokens, monthlyCostUsd } = principal.limits;
    if (rpm === null && dailyTokens === null && monthlyCostUsd === null) return UNLIMITED;
    const key = principal.keyId;
    const now = this.now();
    const minute = minuteWindow(now);
    const day = dayWindow(now);
    const month = monthWindow(now);
    const estimatedCost = estimate.costUsd ?? 0;

    let headers = NO_HEADERS;
    if (rpm !== null) {
      const used = current(this.requests, key, minute.id);
      if (used >= rpm) {
        throw new GatewayError('rate_limit_exceeded', `This key allows ${rpm} requests per minute; wait ${minute.resetSeconds}s.`, {
          retryAfterSeconds: minute.resetSeconds,
          headers: rateLimitHeaders(rpm, 0, minute.resetSeconds),
        });
      }
    }
    if (dailyTokens !== null && current(this.tokens, key, day.id) + estimate.tokens > dailyTokens) {
      throw new GatewayError(
        'daily_token_cap_exceeded',
        `This key's daily cap of ${dailyTokens} tokens would be exceeded (it resets at 00:00 UTC). Ask for fewer tokens (max_tokens) or wait.`,
        { retryAfterSeconds: day.resetSeconds },
      );
    }
    if (monthlyCostUsd !== null && current(this.costs, key, month.id) + estimatedCost > monthlyCostUsd) {
      throw new GatewayError(
        'monthly_cost_cap_exceeded',
        `This key's monthly cost cap of $${monthlyCostUsd} would be exceeded (it resets on the 1st, UTC).`,
        { retryAfterSeconds: month.resetSeconds },
      );
    }
    if (rpm !== null) {
      const used = bump(this.requests, key, minute.id, 1);
      headers = rateLimitHeaders(rpm, rpm - used, minute.resetSeconds);
    }
    if (dailyTokens !== null) bump(this.tokens, key, day.id, estimate.tokens);
    if (monthlyCostUsd !== null) bump(this.costs, key, month.id, estimatedCost);

    let settled = false;
    return {
      headers,
      settle: async (actual: ActualUsage) => {
        if (settled) return;
        settled = true;
        // Settle in the windows the reservation was made in; a request crossing midnight counts for the day it began.
        if (dailyTokens !== null) bump(this.tokens, key, day.id, actual.tokens - estimate.tokens);
        if (monthlyCostUsd !== null) bump(this.costs, key, month.id, (actual.costUsd ?? 0) - estimatedCost);
      },
    };
  }

  async close(): Promise<void> {}
}
