import type { SharedSignInCounts } from './sign-in-throttle.js';

export interface SignInCountSettings {
  /** Set: attempts are counted in Redis for every instance; unset: each instance counts alone. */
  redisUrl: string | undefined;
  keyPrefix: string;
  commandTimeoutMs: number;
}

/** The shared sign-in counts the configuration asks for (none without Redis). */
export async function createSignInCounts(settings: SignInCountSettings): Promise<SharedSignInCounts | undefined> {
  if (settings.redisUrl === undefined) return undefined;
  // Loaded only here: ioredis takes a tenth of a second to load, for nothing without Redis.
  const { RedisSignInCounts } = await import('./redis-sign-in-counts.js');
  const counts = new RedisSignInCounts({ url: settings.redisUrl, keyPrefix: settings.keyPrefix, commandTimeoutMs: settings.commandTimeoutMs });
  await counts.connect();
  return counts;
}
