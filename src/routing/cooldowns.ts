/** When a deployment is skipped: `failures` retryable failures within `windowMs` cool it down for `durationMs`. */
export interface CooldownPolicy {
  failures: number;
  windowMs: number;
  durationMs: number;
}

/**
 * Which deployments are cooling down. A deployment whose cooldown ended is tried again (the
 * probe); one more failure then cools it down at once, a success clears its failures.
 */
export interface Cooldowns {
  /** The keys among `keys` that are cooling down now. */
  cooling(keys: readonly string[]): Promise<ReadonlySet<string>>;
  /**
   * Counts a retryable failure; `retryAfterMs` (the provider's Retry-After) cools the deployment
   * down for at least that long. Resolves true when a cooldown started.
   */
  failed(key: string, policy: CooldownPolicy, retryAfterMs: number): Promise<boolean>;
  succeeded(key: string): void;
  close(): Promise<void>;
}

/** Cooldowns of this instance alone (no REDIS_URL), and the local mirror of the shared ones. */
export class MemoryCooldowns implements Cooldowns {
  private readonly failures = new Map<string, number[]>();
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async cooling(keys: readonly string[]): Promise<ReadonlySet<string>> {
    return this.coolingNow(keys);
  }

  coolingNow(keys: readonly string[]): Set<string> {
    const now = this.now();
    const found = new Set<string>();
    for (const key of keys) if ((this.until.get(key) ?? 0) > now) found.add(key);
    return found;
  }

  async failed(key: string, policy: CooldownPolicy, retryAfterMs: number): Promise<boolean> {
    const now = this.now();
    const recent = (this.failures.get(key) ?? []).filter((at) => at > now - policy.windowMs);
    recent.push(now);
    const tripped = recent.length >= policy.failures;
    const coolMs = Math.max(tripped ? policy.durationMs : 0, retryAfterMs);
    if (coolMs > 0) this.until.set(key, Math.max(this.until.get(key) ?? 0, now + coolMs));
    // On probation once the cooldown ends: the failures counted then, so the next one trips it again.
    this.failures.set(key, tripped ? new Array<number>(policy.failures - 1).fill(now + coolMs) : recent);
    return coolMs > 0;
  }

  /** Whether a deployment has failures counted (a success then clears them). */
  hasFailures(key: string): boolean {
    return this.failures.has(key);
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  async close(): Promise<void> {}
}
