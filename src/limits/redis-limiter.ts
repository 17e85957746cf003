import { Redis } from 'ioredis';
import { sharedStateRedisOptions } from '../storage/index.js';
import type { Principal } from '../keys/index.js';
import { budgetExceeded, dailyTokenCapExceeded, monthlyCostCapExceeded, requestsPerMinuteExceeded } from './limit-errors.js';
import { hasLimits, reservedUsage, unlimitedAdmission } from './in-memory-limiter.js';
import { usdToMicro } from './micro-usd.js';
import { ADMIT_SCRIPT, ANNOUNCE_SCRIPT, SEED_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.js';
import type { ActualUsage, Admission, BudgetHold, BudgetSeed, Limiter, LimiterState, UsageEstimate } from './types.js';
import { dayWindow, minuteWindow, monthWindow, rateLimitHeaders } from './windows.js';

const HOUR_MS = 3_600_000;
const NO_LIMIT = -1;
/**
 * How long ioredis waits for any answer. An admission stops waiting after the configured
 * command timeout (the fallback admits instead) but its answer is still read for this long, so
 * a reservation Redis made all the same can be given back.
 */
const LATE_ANSWER_MS = 60_000;

interface ScriptedRedis extends Redis {
  modelgateAdmit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<[verdict: number, used: number, reservedTokens?: number, reservedCost?: number]>;
  modelgateSeed(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
  modelgateSettle(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
  modelgateAnnounce(instancesKey: string, now: number, instanceId: string, recentMs: number): Promise<number>;
}

export interface RedisLimiterOptions {
  url: string;
  /** Prefix of every key this limiter writes (tests and shared Redis servers use their own). */
  keyPrefix: string;
  /** Longest wait for one Redis command before the call fails (and the fallback takes over). */
  commandTimeoutMs: number;
}

/**
 * Limits kept in Redis so that every instance sharing it enforces one limit. Check and
 * reserve is one Lua script (atomic across instances). Any Redis failure rejects with the
 * client's error (never a GatewayError), which the failover limiter turns into a fallback.
 */
export class RedisLimiter implements Limiter {
  private readonly redis: ScriptedRedis;
  /** Requests of the current minute per key, as Redis last answered an admission of this instance. */
  private readonly seenRequests = new Map<string, { minute: number; used: number }>();
  /** Requests of the current minute per key that this instance admitted. */
  private readonly ownRequests = new Map<string, { minute: number; count: number }>();

  constructor(private readonly options: RedisLimiterOptions) {
    // A late answer still counts (LATE_ANSWER_MS); the request itself never waits that long.
    const redis = new Redis(options.url, sharedStateRedisOptions(Math.max(options.commandTimeoutMs, LATE_ANSWER_MS), options.commandTimeoutMs));
    redis.defineCommand('modelgateAdmit', { lua: ADMIT_SCRIPT });
    redis.defineCommand('modelgateSeed', { lua: SEED_SCRIPT });
    redis.defineCommand('modelgateSettle', { lua: SETTLE_SCRIPT });
    redis.defineCommand('modelgateAnnounce', { numberOfKeys: 1, lua: ANNOUNCE_SCRIPT });
    this.redis = redis as ScriptedRedis;
  }

  /** The client, for the failover limiter's connection events. */
  get client(): Redis {
    return this.redis;
  }

  /** Starts connecting; resolves when connected, rejects when the first attempt fails (it keeps retrying). */
  connect(): Promise<void> {
    return this.redis.connect();
  }

  available(): boolean {
    return this.redis.status === 'ready';
  }

  async admit(principal: Principal, estimate: UsageEstimate, budgets: readonly BudgetHold[] = []): Promise<Admission> {
    const keyed = hasLimits(principal);
    if (!keyed && budgets.length === 0) return unlimitedAdmission(estimate);
    const { rpm, dailyTokens, monthlyCostUsd } = keyed ? principal.limits : { rpm: null, dailyTokens: null, monthlyCostUsd: null };
    const keyId = principal.kind === 'key' ? principal.keyId : 'anonymous';
    const now = Date.now();
    const minute = minuteWindow(now);
    const day = dayWindow(now);
    const month = monthWindow(now);
    // A hash tag keeps one key's counters in one slot, so the script also runs on Redis Cluster
    // (budgets' counters are shared by many keys: with budgets it needs one Redis, docs/limits.md).
    const base = `${this.options.keyPrefix}{${keyId}}`;
    const keys = [`${base}:rpm:${minute.id}`, `${base}:tokens:${day.id}`, `${base}:cost:${month.id}`] as const;
    const budgetKeys = budgets.flatMap((budget) => this.budgetKeys(budget));
    const estimatedCost = usdToMicro(estimate.costUsd);

    /** Replaces the reservation in Redis (`reserved` tokens and micro-USD) with what the request used. */
    const correct = async (reserved: { tokens: number; cost: number }, actual: ActualUsage) => {
      const corrections: [string, number][] = [];
      if (dailyTokens !== null) corrections.push([keys[1], actual.tokens - reserved.tokens]);
      if (monthlyCostUsd !== null) corrections.push([keys[2], usdToMicro(actual.costUsd) - reserved.cost]);
      budgetKeys.forEach((key, index) => corrections.push([key, index % 2 === 0 ? actual.tokens - reserved.tokens : usdToMicro(actual.costUsd) - reserved.cost]));
      const changed = corrections.filter(([, delta]) => delta !== 0);
      if (changed.length === 0) return;
      await this.redis.modelgateSettle(changed.length, ...changed.map(([key]) => key), ...changed.map(([, delta]) => delta));
    };

    const answer = this.redis.modelgateAdmit(
      keys.length + budgetKeys.length,
      ...keys,
      ...budgetKeys,
      rpm ?? NO_LIMIT,
      dailyTokens ?? NO_LIMIT,
      monthlyCostUsd === null ? NO_LIMIT : usdToMicro(monthlyCostUsd),
      estimate.tokens,
      estimatedCost,
      2 * 60_000,
      day.resetSeconds * 1000 + HOUR_MS,
      month.resetSeconds * 1000 + HOUR_MS,
      ...budgets.flatMap((budget) => [budget.tokens ?? NO_LIMIT, budget.costMicroUsd ?? NO_LIMIT, budgetTtl(budget, now)]),
    );
    let verdict: number;
    let used: number;
    let reserved: { tokens: number; cost: number };
    try {
      const [answered, usedRequests, reservedTokens, reservedCost] = await answerWithin(answer, this.options.commandTimeoutMs);
      verdict = answered;
      used = usedRequests;
      reserved = { tokens: reservedTokens ?? 0, cost: reservedCost ?? 0 };
    } catch (error) {
      // Redis may still run the script. The caller admits with its fallback instead, which counts
      // this request, so a reservation Redis makes for it is given back when its answer arrives.
      answer
        .then(([late, , lateTokens, lateCost]) => (late === 0 ? correct({ tokens: lateTokens ?? 0, cost: lateCost ?? 0 }, { tokens: 0, costUsd: null }) : undefined))
        .catch(() => undefined);
      throw error;
    }
    if (rpm !== null) this.seenRequests.set(keyId, { minute: minute.id, used });
    const headers = rpm === null ? {} : rateLimitHeaders(rpm, rpm - used, minute.resetSeconds);
    if (verdict === 1) throw requestsPerMinuteExceeded(rpm ?? 0, minute.resetSeconds);
    if (verdict === 2) throw dailyTokenCapExceeded(dailyTokens ?? 0, day.resetSeconds, headers);
    if (verdict === 3) throw monthlyCostCapExceeded(monthlyCostUsd ?? 0, month.resetSeconds, headers);
    // A budget's refusal names it by its index (from 1) and what ran out (1 tokens, 2 cost).
    if (verdict === 4) throw budgetExceeded(budgets[reserved.tokens - 1]!, reserved.cost === 1 ? 'tokens' : 'cost', now, headers);
    if (rpm !== null) {
      const own = this.ownRequests.get(keyId);
      this.ownRequests.set(keyId, { minute: minute.id, count: own !== undefined && own.minute === minute.id ? own.count + 1 : 1 });
    }

    let settled = false;
    return {
      headers,
      reserved: reservedUsage(estimate, reserved.tokens, reserved.cost),
      settle: async (actual: ActualUsage) => {
        if (settled) return;
        settled = true;
        await correct(reserved, actual);
      },
    };
  }

  /** A budget's two counters (tokens, micro-USD) in its period. */
  private budgetKeys(budget: { budgetId: string; periodId: string }): [string, string] {
    const base = `${this.options.keyPrefix}budget:{${budget.budgetId}}`;
    return [`${base}:tokens:${budget.periodId}`, `${base}:cost:${budget.periodId}`];
  }

  async seedBudgets(seeds: readonly BudgetSeed[]): Promise<void> {
    if (seeds.length === 0) return;
    const now = Date.now();
    const keys = seeds.flatMap((seed) => this.budgetKeys(seed));
    const args = seeds.flatMap((seed) => {
      const ttl = budgetTtl(seed, now);
      return [seed.tokens, ttl, seed.costMicroUsd, ttl];
    });
    await answerWithin(this.redis.modelgateSeed(keys.length, ...keys, ...args), this.options.commandTimeoutMs);
  }

  async budgetUsage(holds: readonly BudgetHold[]): Promise<{ tokens: number; costMicroUsd: number }[]> {
    if (holds.length === 0) return [];
    const values = await answerWithin(this.redis.mget(...holds.flatMap((hold) => this.budgetKeys(hold))), this.options.commandTimeoutMs);
    return holds.map((_hold, index) => ({ tokens: Number(values[2 * index] ?? 0), costMicroUsd: Number(values[2 * index + 1] ?? 0) }));
  }

  lastSeenHeaders(principal: Principal): Readonly<Record<string, string>> {
    if (principal.kind !== 'key' || principal.limits.rpm === null) return {};
    const minute = minuteWindow(Date.now());
    const seen = this.seenRequests.get(principal.keyId);
    const used = seen !== undefined && seen.minute === minute.id ? seen.used : 0;
    return rateLimitHeaders(principal.limits.rpm, principal.limits.rpm - used, minute.resetSeconds);
  }

  /** Requests this instance admitted in the minute of `now`, per key (what it carries into an outage). */
  ownRequestsIn(now: number): Map<string, number> {
    const minute = minuteWindow(now).id;
    const counts = new Map<string, number>();
    for (const [keyId, own] of this.ownRequests) {
      if (own.minute === minute) counts.set(keyId, own.count);
      else this.ownRequests.delete(keyId);
    }
    return counts;
  }

  /**
   * Announces this instance to the others sharing the counters; resolves with how many were
   * announced within `recentMs` (this one included), rejects when Redis does not answer.
   */
  announce(instanceId: string, recentMs: number): Promise<number> {
    return answerWithin(this.redis.modelgateAnnounce(`${this.options.keyPrefix}instances`, Date.now(), instanceId, recentMs), this.options.commandTimeoutMs);
  }

  /** Takes this instance out of the announced ones (a graceful shutdown). */
  async withdraw(instanceId: string): Promise<void> {
    if (this.redis.status !== 'ready') return;
    await answerWithin(this.redis.zrem(`${this.options.keyPrefix}instances`, instanceId), this.options.commandTimeoutMs).catch(() => undefined);
  }

  state(): LimiterState {
    return { backend: 'redis', fallbackActive: false, fallbackAdmissions: 0 };
  }

  /** A PING; false while disconnected (nothing is queued) or when no answer comes in time. */
  async sharedCountersAnswer(): Promise<boolean> {
    return answerWithin(this.redis.ping(), this.options.commandTimeoutMs).then(
      () => true,
      () => false,
    );
  }

  async close(): Promise<void> {
    if (this.redis.status === 'ready') {
      // A Redis that stopped answering holds the shutdown no longer than one admission.
      await answerWithin(this.redis.quit(), this.options.commandTimeoutMs).catch(() => this.redis.disconnect());
    } else {
      this.redis.disconnect();
    }
  }
}

/** The answer of a command, or a rejection once it took longer than `timeoutMs`. */
async function answerWithin<T>(answer: Promise<T>, timeoutMs: number): Promise<T> {
  // An answer no longer waited for may still fail later (the connection closes): not an unhandled rejection.
  answer.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a budget's counters are kept: its period and an hour (a late settlement still finds them); -1 for a total budget. */
function budgetTtl(budget: { resetsAt: number | null }, now: number): number {
  return budget.resetsAt === null ? NO_LIMIT : Math.max(1, budget.resetsAt - now) + HOUR_MS;
}
