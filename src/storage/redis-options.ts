import type { RedisOptions } from 'ioredis';

/**
 * The client options of the gateway's shared state in Redis (limits, cooldowns, cached
 * answers): a command while disconnected fails at once instead of queueing, since a request
 * must not wait for Redis to come back; the client reconnects by itself, at most every 5 s;
 * the commands of one event-loop turn go out as one write.
 */
export function sharedStateRedisOptions(commandTimeoutMs: number, connectTimeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: Math.max(connectTimeoutMs, 1_000),
    retryStrategy: (attempt) => Math.min(attempt * 250, 5_000),
    lazyConnect: true,
    enableAutoPipelining: true,
  };
}
