import type { Kysely } from 'kysely';
import type { Database } from '../storage/index.js';

/**
 * Failed sign-ins counted per account (the email as typed, known or not, so the throttle
 * does not tell which emails exist) and per client address, in the database so every
 * instance counts the same failures. Past a number of free failures, each further attempt
 * waits twice as long as the one before (up to a ceiling): an attacker is slowed to a trickle,
 * and the owner is never locked out — the right password is admitted once the wait is over.
 * Before any password is checked the attempt is counted here, synchronously: at most
 * `concurrentPerAccount` checks of one account run at once on an instance, and an attempt
 * admitted while others are in flight is counted as if those had failed.
 *
 * With shared counts (Redis, when `REDIS_URL` is set) the attempt is checked and counted there
 * in one atomic step, so instances together admit no more checks than one would; while Redis
 * does not answer, each instance counts as above.
 */

export interface ThrottleLimits {
  windowMs: number;
  /** Failures of one account within the window that cost no wait; each further one doubles the wait. */
  perAccount: number;
  /** Failures from one address within the window that cost no wait (a shared NAT has many users). */
  perAddress: number;
  /** The first wait, in seconds, once the free failures are spent (default 1). */
  baseDelaySeconds?: number;
  /** The longest wait, in seconds (default 300). */
  maxDelaySeconds?: number;
  /** Password checks of one account running at once on an instance (default 2). */
  concurrentPerAccount?: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = { windowMs: 15 * 60_000, perAccount: 5, perAddress: 20 };

/** A subject of the throttle (`account:<email>` or `address:<ip>`) and its free attempts. */
export interface SignInSubject {
  key: string;
  free: number;
}

/** Attempts counted for every instance at once (Redis). */
export interface SharedSignInCounts {
  /**
   * Checks every subject's wait and, when none is left, counts the attempt for each (in flight
   * until it succeeds, a failure otherwise): the milliseconds to wait (0: counted), or
   * undefined when the shared counts do not answer.
   */
  admit(subjects: readonly SignInSubject[], now: number, delays: { baseMs: number; maxMs: number; windowMs: number }): Promise<number | undefined>;
  /** A success clears the account's count and gives the address its attempt back. */
  succeeded(accountKey: string, addressKey: string): Promise<void>;
  close(): Promise<void>;
}

/** An admitted attempt: its in-flight count is given back once its check ended. */
export interface SignInAttempt {
  done(): void;
}

export class SignInThrottle {
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    readonly limits: ThrottleLimits = DEFAULT_THROTTLE_LIMITS,
    private readonly shared?: SharedSignInCounts,
  ) {}

  /**
   * Counts an attempt before its check: refused (the seconds to wait) while the account has
   * its cap of checks in flight or a wait is not over; else admitted, and in flight until `done`.
   */
  async admit(email: string, address: string, now: number): Promise<{ wait: number } | { attempt: SignInAttempt }> {
    const account = `account:${email}`;
    const from = `address:${address}`;
    // Counted synchronously, before any await: concurrent attempts see each other.
    if ((this.inFlight.get(account) ?? 0) >= (this.limits.concurrentPerAccount ?? 2)) return { wait: 1 };
    const others = { account: this.inFlight.get(account) ?? 0, address: this.inFlight.get(from) ?? 0 };
    this.change(account, 1);
    this.change(from, 1);
    let released = false;
    const attempt = {
      done: () => {
        if (released) return;
        released = true;
        this.change(account, -1);
        this.change(from, -1);
      },
    };
    try {
      const sharedWaitMs = await this.shared?.admit(
        [
          { key: account, free: this.limits.perAccount },
          { key: from, free: this.limits.perAddress },
        ],
        now,
        { baseMs: (this.limits.baseDelaySeconds ?? 1) * 1000, maxMs: (this.limits.maxDelaySeconds ?? 300) * 1000, windowMs: this.limits.windowMs },
      );
      if (sharedWaitMs === 0) return { attempt };
      if (sharedWaitMs !== undefined) {
        attempt.done();
        return { wait: Math.max(1, Math.ceil(sharedWaitMs / 1000)) };
      }
      const since = now - this.limits.windowMs;
      const waits = await Promise.all([
        this.waitFor(account, this.limits.perAccount, others.account, since, now),
        this.waitFor(from, this.limits.perAddress, others.address, since, now),
      ]);
      const wait = Math.max(...waits);
      if (wait === 0) return { attempt };
      attempt.done();
      return { wait };
    } catch (error) {
      attempt.done();
      throw error;
    }
  }

  /** Seconds to wait before another attempt, or 0 when one is allowed now (attempts in flight not counted). */
  async waitSeconds(email: string, address: string, now: number = Date.now()): Promise<number> {
    const since = now - this.limits.windowMs;
    const waits = await Promise.all([
      this.waitFor(`account:${email}`, this.limits.perAccount, 0, since, now),
      this.waitFor(`address:${address}`, this.limits.perAddress, 0, since, now),
    ]);
    return Math.max(...waits);
  }

  async recordFailure(email: string, address: string, now: number = Date.now()): Promise<void> {
    await this.db
      .insertInto('dashboard_sign_in_failures')
      .values([
        { subject: `account:${email}`, failed_at: now },
        { subject: `address:${address}`, failed_at: now },
      ])
      .execute();
    // Old rows are removed as new ones come: the table holds one window of failures.
    await this.db.deleteFrom('dashboard_sign_in_failures').where('failed_at', '<', now - this.limits.windowMs).execute();
  }

  /**
   * A successful sign-in clears the account's count (not the address's: one success must not
   * reset a spray; in the shared counts it gives back only its own attempt).
   */
  async succeeded(email: string, address: string): Promise<void> {
    await this.shared?.succeeded(`account:${email}`, `address:${address}`);
    await this.db.deleteFrom('dashboard_sign_in_failures').where('subject', '=', `account:${email}`).execute();
  }

  private change(subject: string, by: number): void {
    const count = (this.inFlight.get(subject) ?? 0) + by;
    if (count <= 0) this.inFlight.delete(subject);
    else this.inFlight.set(subject, count);
  }

  /** The wait after a subject's failures (and `pending` checks in flight, counted as failures made now). */
  private async waitFor(subject: string, free: number, pending: number, since: number, now: number): Promise<number> {
    const failures = await this.db
      .selectFrom('dashboard_sign_in_failures')
      .select('failed_at')
      .where('subject', '=', subject)
      .where('failed_at', '>=', since)
      .orderBy('failed_at', 'desc')
      .execute();
    const count = failures.length + pending;
    if (count < free) return 0;
    const base = this.limits.baseDelaySeconds ?? 1;
    const delayMs = Math.min(this.limits.maxDelaySeconds ?? 300, base * 2 ** (count - free)) * 1000;
    const last = pending > 0 ? now : failures[0]!.failed_at;
    const waitMs = last + delayMs - now;
    return waitMs <= 0 ? 0 : Math.max(1, Math.ceil(waitMs / 1000));
  }
}
