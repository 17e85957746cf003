import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { sharedStateRedisOptions } from '../storage/index.js';
import type { SharedSignInCounts, SignInSubject } from './sign-in-throttle.js';

/**
 * Checks and counts one attempt of every subject in one step, atomic across instances.
 * Each subject is a hash of `n` (attempts counted, in flight ones included) and `last` (the
 * time of the latest). KEYS: subjects. ARGV: now, windowMs, base delay ms, max delay ms,
 * then each subject's free attempts. Returns the milliseconds still to wait (0: counted).
 */
const ADMIT_SCRIPT = `
local now = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local n = tonumber(redis.call('HGET', key, 'n') or '0')
  local free = tonumber(ARGV[4 + i])
  if n >= free then
    local last = tonumber(redis.call('HGET', key, 'last') or '0')
    local delay = math.min(tonumber(ARGV[4]), tonumber(ARGV[3]) * 2 ^ (n - free))
    wait = math.max(wait, last + delay - now)
  end
end
if wait > 0 then return math.ceil(wait) end
for _, key in ipairs(KEYS) do
  redis.call('HINCRBY', key, 'n', 1)
  redis.call('HSET', key, 'last', now)
  redis.call('PEXPIRE', key, ARGV[2])
end
return 0
`;

/** A success gives the address its attempt back (KEYS[1]) and clears the account (KEYS[2]). */
const SUCCEEDED_SCRIPT = `
if tonumber(redis.call('HGET', KEYS[1], 'n') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'n', -1) end
redis.call('DEL', KEYS[2])
return 0
`;

interface ScriptedRedis extends Redis {
  modelgateSignInAdmit(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
  modelgateSignInSucceeded(addressKey: string, accountKey: string): Promise<number>;
}

export interface RedisSignInCountsOptions {
  url: string;
  /** The limits' prefix: one namespace per deployment. */
  keyPrefix: string;
  commandTimeoutMs: number;
}

/**
 * Sign-in attempts counted in Redis, so every instance sharing it throttles one count. Every
 * answer is undefined while Redis does not answer: the throttle then counts on its own.
 */
export class RedisSignInCounts implements SharedSignInCounts {
  private readonly redis: ScriptedRedis;

  constructor(private readonly options: RedisSignInCountsOptions) {
    const redis = new Redis(options.url, sharedStateRedisOptions(options.commandTimeoutMs, options.commandTimeoutMs));
    redis.on('error', () => undefined);
    redis.defineCommand('modelgateSignInAdmit', { lua: ADMIT_SCRIPT });
    redis.defineCommand('modelgateSignInSucceeded', { numberOfKeys: 2, lua: SUCCEEDED_SCRIPT });
    this.redis = redis as ScriptedRedis;
  }

  /** Starts connecting; a failed first attempt is not fatal (the client keeps retrying, the throttle counts alone meanwhile). */
  async connect(): Promise<void> {
    await this.redis.connect().catch(() => undefined);
  }

  /** One slot for every subject (a hash tag), so the script also runs on Redis Cluster; emails are hashed, never stored. */
  private keyOf(subject: string): string {
    return `${this.options.keyPrefix}{sign-in}:${createHash('sha256').update(subject).digest('base64url')}`;
  }

  async admit(subjects: readonly SignInSubject[], now: number, delays: { baseMs: number; maxMs: number; windowMs: number }): Promise<number | undefined> {
    if (this.redis.status !== 'ready') return undefined;
    try {
      return await this.redis.modelgateSignInAdmit(
        subjects.length,
        ...subjects.map((subject) => this.keyOf(subject.key)),
        now,
        delays.windowMs,
        delays.baseMs,
        delays.maxMs,
        ...subjects.map((subject) => subject.free),
      );
    } catch {
      return undefined;
    }
  }

  async succeeded(accountKey: string, addressKey: string): Promise<void> {
    if (this.redis.status !== 'ready') return;
    await this.redis.modelgateSignInSucceeded(this.keyOf(addressKey), this.keyOf(accountKey)).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
