import type { Logger } from 'pino';
import { FailoverLimiter } from './failover-limiter.js';
import { InMemoryLimiter } from './in-memory-limiter.js';
import type { LimitSeedSource, Limiter } from './types.js';

export interface LimiterSettings {
  /** Set: counters live in Redis (shared by every instance); unset: in this process. */
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  redisCommandTimeoutMs: number;
  /** While Redis is unreachable: each instance counts on its own (`local`, default), or limited keys are refused (`failClosed`). */
  redisOutage?: 'local' | 'failClosed';
  /** The fewest instances a Redis outage's share assumes (limits.outageInstances). */
  outageInstances?: number;
}

/**
 * The limiter the configuration asks for. Daily and monthly counters survive a restart:
 * the in-process limiter is seeded from the request log; Redis keeps its own counters.
 */
export async function createLimiter(settings: LimiterSettings, seeds: LimitSeedSource, logger: Logger): Promise<Limiter> {
  if (settings.redisUrl === undefined) {
    const limiter = new InMemoryLimiter();
    const now = Date.now();
    limiter.seed(await seeds(now), now);
    return limiter;
  }
  // Loaded only here: ioredis takes a tenth of a second to load, for nothing without Redis.
  const { RedisLimiter } = await import('./redis-limiter.js');
  const redis = new RedisLimiter({
    url: settings.redisUrl,
    keyPrefix: settings.redisKeyPrefix,
    commandTimeoutMs: settings.redisCommandTimeoutMs,
  });
  const limiter = new FailoverLimiter(redis, seeds, logger, settings.redisOutage ?? 'local', settings.outageInstances ?? 1);
  await limiter.start();
  return limiter;
}
