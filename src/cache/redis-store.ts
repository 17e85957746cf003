import { Redis } from 'ioredis';
import { sharedStateRedisOptions } from '../storage/index.js';
import type { CacheStore, NamespaceBounds } from './cache-store.js';
import type { VectorEntry } from './semantic.js';

/**
 * Keeps the entry and its place in the namespace's use order, then evicts the least recently
 * used while the namespace is over its bounds. KEYS: lru (sorted set: key → last use), sizes
 * (hash: key → bytes, `__bytes` the total), the entry. ARGV: key, value, ttl ms, now, max
 * entries, max bytes, the entries' key prefix. Returns the live entries evicted.
 */
const SET_SCRIPT = `
local lru, sizes, entry = KEYS[1], KEYS[2], KEYS[3]
local key, value, ttl, now, maxEntries, maxBytes, prefix = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local bytes = string.len(value) + string.len(key)
local previous = tonumber(redis.call('HGET', sizes, key) or '0')
redis.call('SET', entry, value, 'PX', ttl)
redis.call('ZADD', lru, now, key)
redis.call('HSET', sizes, key, bytes)
local total = redis.call('HINCRBY', sizes, '__bytes', bytes - previous)
local evicted = 0
while redis.call('ZCARD', lru) > maxEntries or total > maxBytes do
  local oldest = redis.call('ZRANGE', lru, 0, 0)[1]
  if oldest == nil or oldest == key then break end
  redis.call('ZREM', lru, oldest)
  local size = tonumber(redis.call('HGET', sizes, oldest) or '0')
  redis.call('HDEL', sizes, oldest)
  total = redis.call('HINCRBY', sizes, '__bytes', -size)
  evicted = evicted + redis.call('DEL', prefix .. oldest)
end
redis.call('PEXPIRE', lru, ttl * 2)
redis.call('PEXPIRE', sizes, ttl * 2)
return evicted
`;

/** Reads an entry and moves it last in the use order; an entry that expired leaves the order and the byte total. KEYS as SET_SCRIPT; ARGV: key, now. */
const GET_SCRIPT = `
local lru, sizes, entry = KEYS[1], KEYS[2], KEYS[3]
local key, now = ARGV[1], tonumber(ARGV[2])
local value = redis.call('GET', entry)
if value then
  redis.call('ZADD', lru, 'XX', now, key)
  return value
end
if redis.call('ZREM', lru, key) == 1 then
  local size = tonumber(redis.call('HGET', sizes, key) or '0')
  redis.call('HDEL', sizes, key)
  redis.call('HINCRBY', sizes, '__bytes', -size)
end
return false
`;

/**
 * Keeps a semantic entry's vector in its prefix's hash and its place in the namespace's
 * vector use order, then drops the least recently used past the bound. KEYS: the vector use
 * order (sorted set: `prefix:key` → last use), the prefix's hash (key → vector). ARGV: the
 * order's member, key, vector, now, max entries, ttl ms, the prefix hashes' key prefix.
 */
const ADD_VECTOR_SCRIPT = `
local order, vectors = KEYS[1], KEYS[2]
local member, key, vector, now, maxEntries, ttl, prefix = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
redis.call('HSET', vectors, key, vector)
redis.call('PEXPIRE', vectors, ttl)
-- Later than every other use, even in the same millisecond: ties would be popped in member order.
local latest = redis.call('ZRANGE', order, -1, -1, 'WITHSCORES')[2]
if latest and tonumber(latest) >= now then now = tonumber(latest) + 1 end
redis.call('ZADD', order, now, member)
redis.call('PEXPIRE', order, ttl * 2)
local over = redis.call('ZCARD', order) - maxEntries
if over > 0 then
  local gone = redis.call('ZPOPMIN', order, over)
  for index = 1, #gone, 2 do
    local at = string.find(gone[index], ':', 1, true)
    redis.call('HDEL', prefix .. string.sub(gone[index], 1, at - 1), string.sub(gone[index], at + 1))
  end
end
return over
`;

interface ScriptedRedis extends Redis {
  modelgateCacheAddVector(...keysAndArgs: (string | number)[]): Promise<number>;
  modelgateCacheSet(...keysAndArgs: (string | number)[]): Promise<number>;
  modelgateCacheGet(...keysAndArgs: (string | number)[]): Promise<string | null>;
}

export interface RedisCacheOptions {
  url: string;
  /** Prefix of every key the cache writes. */
  keyPrefix: string;
  /** Longest wait for one command; then the request goes on as a miss. */
  commandTimeoutMs: number;
}

/**
 * Cached answers in Redis, shared by every instance that uses it. A namespace's keys share a
 * hash tag (`{namespace}`), so its scripts run on one node of a cluster too.
 */
export class RedisCacheStore implements CacheStore {
  readonly kind = 'redis' as const;
  private readonly redis: ScriptedRedis;

  constructor(private readonly options: RedisCacheOptions) {
    // A command while Redis is away fails at once: the request goes on as a miss.
    const redis = new Redis(options.url, sharedStateRedisOptions(options.commandTimeoutMs, options.commandTimeoutMs));
    redis.defineCommand('modelgateCacheSet', { numberOfKeys: 3, lua: SET_SCRIPT });
    redis.defineCommand('modelgateCacheGet', { numberOfKeys: 3, lua: GET_SCRIPT });
    redis.defineCommand('modelgateCacheAddVector', { numberOfKeys: 2, lua: ADD_VECTOR_SCRIPT });
    // Failures are the commands' to report (a miss); the client's own event would be unhandled.
    redis.on('error', () => undefined);
    this.redis = redis as ScriptedRedis;
  }

  /** Starts connecting; resolves when connected (a later failure makes each command a miss until it is back). */
  async connect(): Promise<void> {
    await this.redis.connect().catch(() => undefined);
  }

  private keysOf(namespace: string, key: string): string[] {
    const base = `${this.options.keyPrefix}{${namespace}}`;
    return [`${base}:lru`, `${base}:sizes`, `${base}:e:${key}`];
  }

  get(namespace: string, key: string): Promise<string | null> {
    return this.redis.modelgateCacheGet(...this.keysOf(namespace, key), key, Date.now());
  }

  set(namespace: string, key: string, value: string, ttlMs: number, bounds: NamespaceBounds): Promise<number> {
    const keys = this.keysOf(namespace, key);
    const prefix = `${this.options.keyPrefix}{${namespace}}:e:`;
    return this.redis.modelgateCacheSet(...keys, key, value, Math.max(1, Math.round(ttlMs)), Date.now(), bounds.maxEntries, bounds.maxBytes, prefix);
  }

  async addVector(namespace: string, prefix: string, entry: VectorEntry, ttlMs: number, maxEntries: number): Promise<void> {
    const base = `${this.options.keyPrefix}{${namespace}}`;
    const ttl = Math.max(1, Math.round(ttlMs));
    await this.redis.modelgateCacheAddVector(`${base}:vorder`, `${base}:v:${prefix}`, `${prefix}:${entry.key}`, entry.key, entry.vector, Date.now(), maxEntries, ttl, `${base}:v:`);
  }

  async vectors(namespace: string, prefix: string): Promise<VectorEntry[]> {
    const held = await this.redis.hgetall(`${this.options.keyPrefix}{${namespace}}:v:${prefix}`);
    return Object.entries(held).map(([key, vector]) => ({ key, vector }));
  }

  async clear(namespace?: string): Promise<number> {
    const prefix = this.options.keyPrefix;
    // The namespace itself and those inside it; `*` in a project id is not possible (ids are [a-z0-9_-]).
    const patterns = namespace === undefined ? [`${prefix}{*`] : [`${prefix}{${namespace}}*`, `${prefix}{${namespace}:*`];
    let removed = 0;
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        if (keys.length === 0) continue;
        removed += keys.filter((key) => key.slice(key.indexOf('}')).startsWith('}:e:')).length;
        await this.redis.unlink(...keys);
      } while (cursor !== '0');
    }
    return removed;
  }

  heldBytes(): null {
    return null;
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
