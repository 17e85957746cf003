import { Redis } from 'ioredis';
import { sharedStateRedisOptions } from '../storage/index.js';
import { MemoryCooldowns, type CooldownPolicy, type Cooldowns } from './cooldowns.js';

/**
 * Counts a failure and starts a cooldown, atomically for every instance.
 * KEYS: failures counter, cooldown flag. ARGV: failures, windowMs, durationMs, retryAfterMs.
 * Returns 1 when a cooldown started.
 */
const FAILED_SCRIPT = `
local failures = tonumber(ARGV[1])
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local cool = tonumber(ARGV[4])
if n >= failures then cool = math.max(cool, tonumber(ARGV[3])) end
if cool <= 0 then return 0 end
if redis.call('PTTL', KEYS[2]) < cool then redis.call('SET', KEYS[2], '1', 'PX', cool) end
if n >= failures then redis.call('SET', KEYS[1], failures - 1, 'PX', cool + tonumber(ARGV[2])) end
return 1
`;

interface ScriptedRedis extends Redis {
  modelgateCooldownFailed(failuresKey: string, coolingKey: string, ...args: number[]): Promise<number>;
}

export interface RedisCooldownOptions {
  url: string;
  /** Prefix of every key written (the limits' prefix: one namespace per gateway). */
  keyPrefix: string;
  commandTimeoutMs: number;
}

/**
 * Cooldowns shared by every instance through Redis. Each instance also keeps its own (the
 * mirror): while Redis does not answer, routing goes on with what this instance saw.
 */
export class RedisCooldowns implements Cooldowns {
  private readonly redis: ScriptedRedis;
  private readonly local = new MemoryCooldowns();

  constructor(private readonly options: RedisCooldownOptions) {
    const redis = new Redis(options.url, sharedStateRedisOptions(options.commandTimeoutMs, options.commandTimeoutMs));
    redis.on('error', () => undefined);
    redis.defineCommand('modelgateCooldownFailed', { numberOfKeys: 2, lua: FAILED_SCRIPT });
    this.redis = redis as ScriptedRedis;
  }

  /** Starts connecting; a failed first attempt is not fatal (the client keeps retrying, the mirror serves). */
  async connect(): Promise<void> {
    await this.redis.connect().catch(() => undefined);
  }

  private keyOf(kind: 'failures' | 'cooling', key: string): string {
    return `${this.options.keyPrefix}routing:${kind}:${key}`;
  }

  async cooling(keys: readonly string[]): Promise<ReadonlySet<string>> {
    const found = this.local.coolingNow(keys);
    if (keys.length === 0 || this.redis.status !== 'ready') return found;
    try {
      const values = await this.redis.mget(...keys.map((key) => this.keyOf('cooling', key)));
      values.forEach((value, index) => value !== null && found.add(keys[index]!));
    } catch {
      // Redis did not answer: this instance's own view stands.
    }
    return found;
  }

  async failed(key: string, policy: CooldownPolicy, retryAfterMs: number): Promise<boolean> {
    const locally = await this.local.failed(key, policy, retryAfterMs);
    if (this.redis.status !== 'ready') return locally;
    try {
      const started = await this.redis.modelgateCooldownFailed(
        this.keyOf('failures', key),
        this.keyOf('cooling', key),
        policy.failures,
        policy.windowMs,
        policy.durationMs,
        Math.round(retryAfterMs),
      );
      return started === 1 || locally;
    } catch {
      return locally;
    }
  }

  succeeded(key: string): void {
    // Only a deployment this instance saw fail clears the shared count: no Redis write per success.
    if (!this.local.hasFailures(key)) return;
    this.local.succeeded(key);
    if (this.redis.status === 'ready') this.redis.del(this.keyOf('failures', key)).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
