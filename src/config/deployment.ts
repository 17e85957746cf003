import { availableParallelism } from 'node:os';
import { ConfigError } from './load.js';
import type { GatewayConfig } from './schema.js';

/**
 * How many processes `serve` runs. `0` (the default) means one per core when Redis is
 * configured (limits are then shared) and one otherwise; more than one without Redis is
 * refused, because each worker would enforce its own per-minute limit.
 */
export function workerCount(config: GatewayConfig): number {
  const requested = config.server.workers;
  if (requested === 0) return config.redisUrl !== undefined ? availableParallelism() : 1;
  if (requested > 1 && config.redisUrl === undefined) {
    throw new ConfigError(
      `invalid setting server.workers: ${requested} workers need REDIS_URL so per-key limits hold across them; set REDIS_URL or use --workers 1`,
    );
  }
  return requested;
}

/** A connection URL as start-up and `modelgate status` show it: scheme, host, port and path, never a user or password. */
export function describeConnectionUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/** Where the gateway keeps its data, in words: its kind and address, never its credentials. */
export function describeStorage(config: GatewayConfig): string {
  if (config.databaseUrl === undefined) return `SQLite in ${config.dataDir}`;
  const address = describeConnectionUrl(config.databaseUrl);
  return `PostgreSQL at ${address.replace(/^[a-z]+:\/\//, '')}`;
}

/** Where per-key limits are counted, in words. */
export function describeRedis(config: GatewayConfig): string {
  return config.redisUrl !== undefined ? `Redis at ${describeConnectionUrl(config.redisUrl)}` : 'none (limits are counted in this process)';
}
