import type { Logger } from 'pino';
import { GatewayError, isGatewayError } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import { hasLimits, InMemoryLimiter, unlimitedAdmission } from './in-memory-limiter.js';
import type { RedisLimiter } from './redis-limiter.js';
import type { ActualUsage, Admission, LimitSeedSource, Limiter, LimiterState, UsageEstimate } from './types.js';

const RETRY_PRIMARY_AFTER_MS = 1_000;

/**
 * Redis limits that survive a Redis outage. While Redis is unreachable (not connected, or a
 * command fails or times out), this instance enforces every limit with its own counters,
 * seeded from the request log so daily and monthly caps keep what was already spent; when
 * Redis is back, admissions return to the shared counters. The gateway keeps serving
 * throughout; during the outage a per-minute limit holds per instance rather than in total.
 */
export class FailoverLimiter implements Limiter {
  private readonly fallback = new InMemoryLimiter();
  private fallbackActive = false;
  private fallbackAdmissions = 0;
  private seeding: Promise<void> = Promise.resolve();
  /** After a failed command on a live connection, Redis is not asked again before this time. */
  private retryPrimaryAt = 0;

  constructor(
    private readonly primary: RedisLimiter,
    private readonly seeds: LimitSeedSource,
    private readonly logger: Logger,
    private readonly outageMode: 'local' | 'failClosed' = 'local',
  ) {
    primary.client.on('ready', () => {
      this.retryPrimaryAt = 0;
      this.leaveFallback();
    });
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

  async admit(principal: Principal, estimate: UsageEstimate): Promise<Admission> {
    if (!hasLimits(principal)) return unlimitedAdmission(estimate);
    if (this.primary.available() && Date.now() >= this.retryPrimaryAt) {
      try {
        const admission = await this.primary.admit(principal, estimate);
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
    const admission = await this.fallback.admit(principal, estimate);
    this.fallbackAdmissions += 1;
    return admission;
  }

  lastSeenHeaders(principal: Principal): Readonly<Record<string, string>> {
    return this.fallbackActive ? this.fallback.lastSeenHeaders(principal) : this.primary.lastSeenHeaders(principal);
  }

  state(): LimiterState {
    return { backend: 'redis', fallbackActive: this.fallbackActive, fallbackAdmissions: this.fallbackAdmissions, outageMode: this.outageMode };
  }

  sharedCountersAnswer(): Promise<boolean> {
    return this.primary.sharedCountersAnswer();
  }

  async close(): Promise<void> {
    this.primary.client.removeAllListeners('ready');
    await this.primary.close();
  }

  private enterFallback(reason: Error): void {
    if (this.fallbackActive) return;
    this.fallbackActive = true;
    this.logger.warn(
      { reason: reason.message },
      'Redis is unreachable: enforcing key limits with this instance\'s own counters until it is back',
    );
    const now = Date.now();
    this.seeding = this.seeds(now).then(
      (seeds) => this.fallback.seed(seeds, now),
      (error: unknown) => {
        this.fallback.seed([], now);
        this.logger.error({ err: error }, 'could not read spent usage from the request log; fallback counters start at zero');
      },
    );
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
