import type { CacheStore } from './cache-store.js';
import { MemoryCacheStore } from './memory-store.js';

export interface CacheStoreSettings {
  /** Set: answers are kept in Redis, shared by every instance; unset: in this process. */
  redisUrl: string | undefined;
  keyPrefix: string;
  commandTimeoutMs: number;
}

/** The store the configuration asks for. */
export async function createCacheStore(settings: CacheStoreSettings): Promise<CacheStore> {
  if (settings.redisUrl === undefined) return new MemoryCacheStore();
  // Loaded only here, as the limiter's: ioredis takes a tenth of a second to load.
  const { RedisCacheStore } = await import('./redis-store.js');
  const store = new RedisCacheStore({ url: settings.redisUrl, keyPrefix: settings.keyPrefix, commandTimeoutMs: settings.commandTimeoutMs });
  await store.connect();
  return store;
}
