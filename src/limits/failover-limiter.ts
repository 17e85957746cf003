import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError, isGatewayError } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import { hasLimits, InMemoryLimiter, unlimitedAdmission } from './in-memory-limiter.js';
import type { RedisLimiter } from './redis-limiter.js';
import type { ActualUsage, Admission, BudgetHold, BudgetSeed, LimitSeedSource, Limiter, LimiterState, UsageEstimate } from './types.js';

const RETRY_PRIMARY_AFTER_MS = 1_000;
/** How often an instance announces itself through Redis, and how long an announcement counts. */
export const ANNOUNCE_EVERY_MS = 5_000;
export const ANNOUNCED_FOR_MS = 30_000;

/**
 * The limits an instance enforces alone while Redis is away: its share of each (the limit ÷
 * the instances seen, at least one request and one token), so that together they hold the limit.
 */
function shareOf(principal: Principal & { kind: 'key' }, instances: number): Principal {
  if (instances <= 1) return principal;
  const { rpm, dailyTokens, monthlyCostUsd } = principal.limits;
  return {
    ...principal,
    limits: {
      ...principal.limits,
      rpm: rpm === null ? null : Math.max(1, Math.floor(rpm / instances)),
      dailyTokens: dailyTokens === null ? null : Math.max(1, Math.floor(dailyTokens / instances)),
      monthlyCostUsd: monthlyCostUsd === null ? null : monthlyCostUsd / instances,
    },
  };
}

/** A budget's share during an outage, as for a key's caps. */
function budgetShareOf(budget: BudgetHold, instances: number): BudgetHold {
  if (instances <= 1) return budget;
  const share = (amount: number | null) => (amount === null ? null : Math.max(1, Math.floor(amount / instances)));
  return { ...budget, tokens: share(budget.tokens), costMicroUsd: share(budget.costMicroUsd) };
}

function seedShareOf(seed: BudgetSeed, instances: number): BudgetSeed {
  return { ...seed, tokens: Math.ceil(seed.tokens / instances), costMicroUsd: Math.ceil(seed.costMicroUsd / instances) };
}

/**
 * Redis limits that survive a Redis outage. While Redis is unreachable (not connected, or a
 * command fails or times out), this instance enforces every limit with its own counters,
 * seeded from the request log so daily and monthly caps keep what was already spent; when
 * Redis is back, admissions return to the shared counters. The gateway keeps serving
 * throughout. While Redis is up every instance announces itself there; during an outage each
 * enforces its share of every limit (the limit ÷ the instances seen before it, or
 * limits.outageInstances when that is more), its caps seeded
 * with the same share of what was spent and its per-minute counters with what it admitted
 * itself this minute, so the instances together hold each limit.
 */
export class FailoverLimiter implements Limiter {
  private readonly fallback = new InMemoryLimiter();
  private fallbackActive = false;
  private fallbackAdmissions = 0;
  private seeding: Promise<void> = Promise.resolve();
  /** After a failed command on a live connection, Redis is not asked again before this time. */
  private retryPrimaryAt = 0;
  private readonly instanceId = randomUUID();
  /** Instances announced through Redis within ANNOUNCED_FOR_MS, this one included (as last answered). */
  private instancesSeen = 1;
  /** The instances whose share this instance enforces during the current outage. */
  private outageInstances = 1;
  private readonly announcer: NodeJS.Timeout;
  /** What each budget had spent when it was last seeded from the request log (an outage's fallback starts from its share). */
  private readonly budgetSeeds = new Map<string, BudgetSeed>();

  constructor(
    private readonly primary: RedisLimiter,
    private readonly seeds: LimitSeedSource,
    private readonly logger: Logger,
    private readonly outageMode: 'local' | 'failClosed' = 'local',
    /** The fewest instances an outage's share assumes (limits.outageInstances): one started during an outage has seen only itself. */
    private readonly minimumOutageInstances = 1,
  ) {
    primary.client.on('ready', () => {
      this.retryPrimaryAt = 0;
      this.leaveFallback();
      void this.announce();
    });
    this.announcer = setInterval(() => void this.announce(), ANNOUNCE_EVERY_MS);
    this.announcer.unref();
    // ioredis emits 'error' on every failed reconnect; the transition is what gets logged.
    primary.client.on('error', (error: Error) => this.enterFallback(error));
  }

  /** Connects at start-up; an unreachable Redis starts the gateway in fallback instead of failing. */
  async start(): Promise<void> {
    try {
      await this.primary.connect();
    } catch (error) {
      this.enterFallback(error as Error);
    }
  }

  async admit(principal: Principal, estimate: UsageEstimate, budgets: readonly BudgetHold[] = []): Promise<Admission> {
    if (!hasLimits(principal) && budgets.length === 0) return unlimitedAdmission(estimate);
    if (this.primary.available() && Date.now() >= this.retryPrimaryAt) {
      try {
        const admission = await this.primary.admit(principal, estimate, budgets);
        this.leaveFallback();
        return guardSettle(admission, this.logger);
      } catch (error) {
        if (isGatewayError(error)) {
          this.leaveFallback();
          throw error;
        }
        // A slow or failing Redis on a live connection: do not make every request wait for it.
        this.retryPrimaryAt = Date.now() + RETRY_PRIMARY_AFTER_MS;
        this.enterFallback(error as Error);
      }
    } else if (!this.primary.available()) {
      this.enterFallback(new Error(`Redis connection is ${this.primary.client.status}`));
    }
    if (this.outageMode === 'failClosed') {
      throw new GatewayError(
        'storage_unavailable',
        'The key limits cannot be counted right now: their shared counters (Redis) do not answer, and this deployment refuses limited keys until they do (limits.redisOutage: failClosed). Try again shortly.',
        { retryAfterSeconds: 5 },
      );
    }
    await this.seeding;
    const admission = await this.fallback.admit(principal.kind === 'key' ? shareOf(principal, this.outageInstances) : principal, estimate, budgets.map((budget) => budgetShareOf(budget, this.outageInstances)));
    this.fallbackAdmissions += 1;
    return admission;
  }

  /** Seeds Redis's budget counters (those not counting yet), and keeps the seeds for an outage's fallback. */
  async seedBudgets(seeds: readonly BudgetSeed[]): Promise<void> {
    for (const seed of seeds) this.budgetSeeds.set(seed.budgetId, seed);
    if (this.fallbackActive) return this.fallback.seedBudgets(seeds.map((seed) => seedShareOf(seed, this.outageInstances)));
    await this.primary.seedBudgets(seeds).catch((error: unknown) => this.logger.warn({ reason: (error as Error).message }, 'could not seed budget counters in Redis'));
  }

  budgetUsage(holds: readonly BudgetHold[]): Promise<{ tokens: number; costMicroUsd: number }[]> {
    return this.fallbackActive ? this.fallback.budgetUsage(holds) : this.primary.budgetUsage(holds);
  }

  lastSeenHeaders(principal: Principal): Readonly<Record<string, string>> {
    return this.fallbackActive ? this.fallback.lastSeenHeaders(principal) : this.primary.lastSeenHeaders(principal);
  }

  state(): LimiterState {
    return {
      backend: 'redis',
      fallbackActive: this.fallbackActive,
      fallbackAdmissions: this.fallbackAdmissions,
      outageMode: this.outageMode,
      instancesSeen: this.fallbackActive ? this.outageInstances : this.instancesSeen,
    };
  }

  sharedCountersAnswer(): Promise<boolean> {
    return this.primary.sharedCountersAnswer();
  }

  async close(): Promise<void> {
    clearInterval(this.announcer);
    this.primary.client.removeAllListeners('ready');
    await this.primary.withdraw(this.instanceId);
    await this.primary.close();
  }

  private enterFallback(reason: Error): void {
    if (this.fallbackActive) return;
    this.fallbackActive = true;
    const instances = Math.max(this.instancesSeen, this.minimumOutageInstances);
    this.outageInstances = instances;
    this.logger.warn(
      { reason: reason.message, instances },
      this.outageMode === 'failClosed'
        ? 'Redis is unreachable: refusing keys with limits until it is back (limits.redisOutage: failClosed)'
        : `Redis is unreachable: enforcing key limits with this instance's own counters until it is back, each limit's share 1/${instances} (${this.instancesSeen} instances seen, limits.outageInstances ${this.minimumOutageInstances})`,
    );
    const now = Date.now();
    const ownRequests = this.primary.ownRequestsIn(now);
    this.fallback.replaceBudgetCounters([...this.budgetSeeds.values()].map((seed) => seedShareOf(seed, instances)));
    this.seeding = this.seeds(now).then(
      (seeds) =>
        this.fallback.seed(
          seeds.map((seed) => ({ keyId: seed.keyId, dayTokens: Math.ceil(seed.dayTokens / instances), monthCostMicroUsd: Math.ceil(seed.monthCostMicroUsd / instances) })),
          now,
          ownRequests,
        ),
      (error: unknown) => {
        this.fallback.seed([], now, ownRequests);
        this.logger.error({ err: error }, 'could not read spent usage from the request log; fallback counters start at zero');
      },
    );
  }

  /** Announces this instance; a Redis that does not answer leaves the last count standing. */
  private async announce(): Promise<void> {
    if (!this.primary.available()) return;
    try {
      this.instancesSeen = Math.max(1, await this.primary.announce(this.instanceId, ANNOUNCED_FOR_MS));
    } catch {
      // The next admission finds Redis away and enters the fallback with the last count.
    }
  }

  private leaveFallback(): void {
    if (!this.fallbackActive) return;
    this.fallbackActive = false;
    this.logger.info('Redis is reachable again: key limits use the shared counters');
  }
}

/** A settlement that fails because Redis went away is logged, never thrown into the response path. */
function guardSettle(admission: Admission, logger: Logger): Admission {
  return {
    headers: admission.headers,
    reserved: admission.reserved,
    settle: async (actual: ActualUsage) => {
      try {
        await admission.settle(actual);
      } catch (error) {
        logger.warn({ reason: (error as Error).message }, 'could not settle a reservation in Redis; it expires with its window');
      }
    },
  };
}
