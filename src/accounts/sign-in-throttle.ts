import type { Kysely } from 'kysely';
import type { Database } from '../storage/index.js';

/**
 * Failed sign-ins counted per account (the email as typed, known or not, so the throttle
 * does not tell which emails exist) and per client address, in the database so every
 * instance counts the same failures. A subject over its limit is refused until its oldest
 * counted failure leaves the window.
 */

export interface ThrottleLimits {
  windowMs: number;
  perAccount: number;
  perAddress: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = { windowMs: 15 * 60_000, perAccount: 5, perAddress: 20 };

export class SignInThrottle {
  constructor(
    private readonly db: Kysely<Database>,
    readonly limits: ThrottleLimits = DEFAULT_THROTTLE_LIMITS,
  ) {}

  /** Seconds to wait before another attempt, or 0 when one is allowed now. */
  async waitSeconds(email: string, address: string, now: number = Date.now()): Promise<number> {
    const since = now - this.limits.windowMs;
    const waits = await Promise.all([
      this.waitFor(`account:${email}`, this.limits.perAccount, since, now),
      this.waitFor(`address:${address}`, this.limits.perAddress, since, now),
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

  /** A successful sign-in clears the account's count (not the address's: one success must not reset a spray). */
  async clearAccount(email: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sign_in_failures').where('subject', '=', `account:${email}`).execute();
  }

  private async waitFor(subject: string, limit: number, since: number, now: number): Promise<number> {
    const failures = await this.db
      .selectFrom('dashboard_sign_in_failures')
      .select('failed_at')
      .where('subject', '=', subject)
      .where('failed_at', '>=', since)
      .orderBy('failed_at', 'desc')
      .limit(limit)
      .execute();
    if (failures.length < limit) return 0;
    const oldestCounted = failures[limit - 1]!.failed_at;
    return Math.max(1, Math.ceil((oldestCounted + this.limits.windowMs - now) / 1000));
  }
}
