import { Redis } from 'ioredis';
import { sharedStateRedisOptions } from '../storage/index.js';
import type { Principal } from '../keys/index.js';
import { dailyTokenCapExceeded, monthlyCostCapExceeded, requestsPerMinuteExceeded } from './limit-errors.js';
import { hasLimits, reservedUsage, unlimitedAdmission } from './in-memory-limiter.js';
import { usdToMicro } from './micro-usd.js';
import { ADMIT_SCRIPT, ANNOUNCE_SCRIPT, SETTLE_SCRIPT } from './redis-scripts.js';
import type { ActualUsage, Admission, Limiter, LimiterState, UsageEstimate } from './types.js';
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
  modelgateAdmit(...keysAndArgs: (string | number)[]): Promise<[verdict: number, used: number, reservedTokens?: number, reservedCost?: number]>;
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
    redis.defineCommand('modelgateAdmit', { numberOfKeys: 3, lua: ADMIT_SCRIPT });
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

  async admit(principal: Principal, estimate: UsageEstimate): Promise<Admission> {
    if (!hasLimits(principal)) return unlimitedAdmission(estimate);
    const { rpm, dailyTokens, monthlyCostUsd } = principal.limits;
    const now = Date.now();
    const minute = minuteWindow(now);
    const day = dayWindow(now);
    const month = monthWindow(now);
    // A hash tag keeps one key's counters in one slot, so the script also runs on Redis Cluster.
    const base = `${this.options.keyPrefix}{${principal.keyId}}`;
    const keys = [`${base}:rpm:${minute.id}`, `${base}:tokens:${day.id}`, `${base}:cost:${month.id}`] as const;
    const estimatedCost = usdToMicro(estimate.costUsd);

    /** Replaces the reservation in Redis (`reserved` tokens and micro-USD) with what the request used. */
    const correct = async (reserved: { tokens: number; cost: number }, actual: ActualUsage) => {
      const corrections: [string, number][] = [];
      if (dailyTokens !== null) corrections.push([keys[1], actual.tokens - reserved.tokens]);
      if (monthlyCostUsd !== null) corrections.push([keys[2], usdToMicro(actual.costUsd) - reserved.cost]);
      const changed = corrections.filter(([, delta]) => delta !== 0);
      if (changed.length === 0) return;
      await this.redis.modelgateSettle(changed.length, ...changed.map(([key]) => key), ...changed.map(([, delta]) => delta));
    };

    const answer = this.redis.modelgateAdmit(
      ...keys,
      rpm ?? NO_LIMIT,
      dailyTokens ?? NO_LIMIT,
      monthlyCostUsd === null ? NO_LIMIT : usdToMicro(monthlyCostUsd),
      estimate.tokens,
      estimatedCost,
      2 * 60_000,
      day.resetSeconds * 1000 + HOUR_MS,
      month.resetSeconds * 1000 + HOUR_MS,
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
    if (rpm !== null) this.seenRequests.set(principal.keyId, { minute: minute.id, used });
    const headers = rpm === null ? {} : rateLimitHeaders(rpm, rpm - used, minute.resetSeconds);
    if (verdict === 1) throw requestsPerMinuteExceeded(rpm ?? 0, minute.resetSeconds);
    if (verdict === 2) throw dailyTokenCapExceeded(dailyTokens ?? 0, day.resetSeconds, headers);
    if (verdict === 3) throw monthlyCostCapExceeded(monthlyCostUsd ?? 0, month.resetSeconds, headers);
    if (rpm !== null) {
      const own = this.ownRequests.get(principal.keyId);
      this.ownRequests.set(principal.keyId, { minute: minute.id, count: own !== undefined && own.minute === minute.id ? own.count + 1 : 1 });
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
