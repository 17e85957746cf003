import { MemoryCooldowns, type Cooldowns } from './cooldowns.js';

export interface CooldownSettings {
  /** Set: cooldowns are shared through Redis by every instance; unset: each instance keeps its own. */
  redisUrl: string | undefined;
  keyPrefix: string;
  commandTimeoutMs: number;
}

/** The cooldown store the configuration asks for. */
export async function createCooldowns(settings: CooldownSettings): Promise<Cooldowns> {
  if (settings.redisUrl === undefined) return new MemoryCooldowns();
  // Loaded only here: ioredis takes a tenth of a second to load, for nothing without Redis.
  const { RedisCooldowns } = await import('./redis-cooldowns.js');
  const cooldowns = new RedisCooldowns({ url: settings.redisUrl, keyPrefix: settings.keyPrefix, commandTimeoutMs: settings.commandTimeoutMs });
  await cooldowns.connect();
  return cooldowns;
}
