import type { Principal } from '../keys/index.js';
import { budgetExceeded, dailyTokenCapExceeded, monthlyCostCapExceeded, requestsPerMinuteExceeded } from './limit-errors.js';
import { microToUsd, usdToMicro } from './micro-usd.js';
import type { ActualUsage, Admission, BudgetHold, BudgetSeed, LimitSeed, Limiter, LimiterState, UsageEstimate } from './types.js';
import { dayWindow, minuteWindow, monthWindow, rateLimitHeaders } from './windows.js';

interface Counter {
  window: string | number;
  value: number;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
const NO_KEY_LIMITS = { rpm: null, dailyTokens: null, monthlyCostUsd: null } as const;

/** The admission of a request no limit applies to. */
export function unlimitedAdmission(estimate: UsageEstimate): Admission {
  return { headers: NO_HEADERS, reserved: estimate, settle: async () => undefined };
}

/** `amount`, at most `left` (null: no cap, nothing to clamp to). */
export function clampedTo(amount: number, left: number | null): number {
  return left === null ? amount : Math.min(amount, left);
}

/** What a reservation holds, as usage: the estimate with each amount clamped to its cap's remainder. */
export function reservedUsage(estimate: UsageEstimate, tokens: number, costMicroUsd: number): UsageEstimate {
  return { tokens, costUsd: estimate.costUsd === null ? null : microToUsd(costMicroUsd) };
}

/** Whether the principal has any limit a limiter must count. */
export function hasLimits(principal: Principal): principal is Principal & { kind: 'key' } {
  if (principal.kind !== 'key') return false;
  const { rpm, dailyTokens, monthlyCostUsd } = principal.limits;
  return rpm !== null || dailyTokens !== null || monthlyCostUsd !== null;
}

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

/**
 * Corrects a counter by `delta` only while it still counts `window`: once a newer window has
 * started, it holds other requests' reservations, which a late settlement must not replace.
 */
function correct(counters: Map<string, Counter>, key: string, window: string | number, delta: number): void {
  const counter = counters.get(key);
  if (counter !== undefined && counter.window === window) counter.value += delta;
}

function current(counters: Map<string, Counter>, key: string, window: string | number): number {
  const counter = counters.get(key);
  return counter !== undefined && counter.window === window ? counter.value : 0;
}

/**
 * Limits kept in this process. Check and reserve happen in one synchronous step, so
 * concurrent requests of one process cannot overshoot a cap. Costs are integer micro-USD.
 */
export class InMemoryLimiter implements Limiter {
  private readonly requests = new Map<string, Counter>();
  private readonly tokens = new Map<string, Counter>();
  private readonly costs = new Map<string, Counter>();
  /** Per budget id, in its current period. */
  private readonly budgetTokens = new Map<string, Counter>();
  private readonly budgetCosts = new Map<string, Counter>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Replaces the day and month counters with usage already spent (from the request log), so
   * caps survive a restart. A per-minute counter is raised to its key's `minuteRequests`
   * (requests of this minute made elsewhere; none at start-up: a minute passes quickly).
   */
  seed(seeds: readonly LimitSeed[], at: number = this.now(), minuteRequests: ReadonlyMap<string, number> = new Map()): void {
    const minute = minuteWindow(at).id;
    const day = dayWindow(at).id;
    const month = monthWindow(at).id;
    this.tokens.clear();
    this.costs.clear();
    for (const [keyId, count] of minuteRequests) this.requests.set(keyId, { window: minute, value: Math.max(count, current(this.requests, keyId, minute)) });
    for (const seed of seeds) {
      this.tokens.set(seed.keyId, { window: day, value: seed.dayTokens });
      this.costs.set(seed.keyId, { window: month, value: seed.monthCostMicroUsd });
    }
  }

  async admit(principal: Principal, estimate: UsageEstimate, budgets: readonly BudgetHold[] = []): Promise<Admission> {
    const keyed = hasLimits(principal);
    if (!keyed && budgets.length === 0) return unlimitedAdmission(estimate);
    const { rpm, dailyTokens, monthlyCostUsd } = keyed ? principal.limits : NO_KEY_LIMITS;
    const key = principal.kind === 'key' ? principal.keyId : '';
    const now = this.now();
    const minute = minuteWindow(now);
    const day = dayWindow(now);
    const month = monthWindow(now);
    const estimatedCost = usdToMicro(estimate.costUsd);

    const usedRequests = current(this.requests, key, minute.id);
    // The headers a refusal carries are made only for a refusal.
    const headersAfter = (used: number) => (rpm === null ? NO_HEADERS : rateLimitHeaders(rpm, rpm - used, minute.resetSeconds));
    if (rpm !== null && usedRequests >= rpm) throw requestsPerMinuteExceeded(rpm, minute.resetSeconds);
    // A cap admits while some of it is neither spent nor reserved; the reservation is the
    // estimate clamped to that remainder (docs/limits.md).
    const tokensLeft = dailyTokens === null ? null : dailyTokens - current(this.tokens, key, day.id);
    if (tokensLeft !== null && tokensLeft <= 0) throw dailyTokenCapExceeded(dailyTokens!, day.resetSeconds, headersAfter(usedRequests));
    const costLeft = monthlyCostUsd === null ? null : usdToMicro(monthlyCostUsd) - current(this.costs, key, month.id);
    if (costLeft !== null && costLeft <= 0) throw monthlyCostCapExceeded(monthlyCostUsd!, month.resetSeconds, headersAfter(usedRequests));
    let reservedTokens = clampedTo(estimate.tokens, tokensLeft);
    let reservedCost = clampedTo(estimatedCost, costLeft);
    // Every budget above the request must have room; one reservation, clamped to the smallest remainder, goes to all of them.
    for (const budget of budgets) {
      if (budget.tokens !== null) {
        const left = budget.tokens - current(this.budgetTokens, budget.budgetId, budget.periodId);
        if (left <= 0) throw budgetExceeded(budget, 'tokens', now, headersAfter(usedRequests));
        reservedTokens = Math.min(reservedTokens, left);
      }
      if (budget.costMicroUsd !== null) {
        const left = budget.costMicroUsd - current(this.budgetCosts, budget.budgetId, budget.periodId);
        if (left <= 0) throw budgetExceeded(budget, 'cost', now, headersAfter(usedRequests));
        reservedCost = Math.min(reservedCost, left);
      }
    }

    const used = rpm !== null ? bump(this.requests, key, minute.id, 1) : 0;
    if (dailyTokens !== null) bump(this.tokens, key, day.id, reservedTokens);
    if (monthlyCostUsd !== null) bump(this.costs, key, month.id, reservedCost);
    for (const budget of budgets) {
      bump(this.budgetTokens, budget.budgetId, budget.periodId, reservedTokens);
      bump(this.budgetCosts, budget.budgetId, budget.periodId, reservedCost);
    }

    let settled = false;
    return {
      headers: headersAfter(used),
      reserved: reservedUsage(estimate, reservedTokens, reservedCost),
      settle: async (actual: ActualUsage) => {
        if (settled) return;
        settled = true;
        // Settle in the windows the reservation was made in; a request crossing midnight counts
        // for the day it began, and once that day is over there is nothing left to correct.
        const tokenDelta = actual.tokens - reservedTokens;
        const costDelta = usdToMicro(actual.costUsd) - reservedCost;
        if (dailyTokens !== null) correct(this.tokens, key, day.id, tokenDelta);
        if (monthlyCostUsd !== null) correct(this.costs, key, month.id, costDelta);
        for (const budget of budgets) {
          correct(this.budgetTokens, budget.budgetId, budget.periodId, tokenDelta);
          correct(this.budgetCosts, budget.budgetId, budget.periodId, costDelta);
        }
      },
    };
  }

  async seedBudgets(seeds: readonly BudgetSeed[]): Promise<void> {
    for (const seed of seeds) {
      // A counter of the period already counting (requests admitted since) is kept.
      if (this.budgetTokens.get(seed.budgetId)?.window !== seed.periodId) this.budgetTokens.set(seed.budgetId, { window: seed.periodId, value: seed.tokens });
      if (this.budgetCosts.get(seed.budgetId)?.window !== seed.periodId) this.budgetCosts.set(seed.budgetId, { window: seed.periodId, value: seed.costMicroUsd });
    }
  }

  /** Replaces the budget counters (the failover limiter's share of what was spent, at an outage). */
  replaceBudgetCounters(seeds: readonly BudgetSeed[]): void {
    this.budgetTokens.clear();
    this.budgetCosts.clear();
    void this.seedBudgets(seeds);
  }

  async budgetUsage(holds: readonly BudgetHold[]): Promise<{ tokens: number; costMicroUsd: number }[]> {
    return holds.map((hold) => ({
      tokens: current(this.budgetTokens, hold.budgetId, hold.periodId),
      costMicroUsd: current(this.budgetCosts, hold.budgetId, hold.periodId),
    }));
  }

  lastSeenHeaders(principal: Principal): Readonly<Record<string, string>> {
    if (principal.kind !== 'key' || principal.limits.rpm === null) return NO_HEADERS;
    const minute = minuteWindow(this.now());
    return rateLimitHeaders(principal.limits.rpm, principal.limits.rpm - current(this.requests, principal.keyId, minute.id), minute.resetSeconds);
  }

  state(): LimiterState {
    return { backend: 'memory', fallbackActive: false, fallbackAdmissions: 0 };
  }

  async sharedCountersAnswer(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {}
}
