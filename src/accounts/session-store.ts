import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/index.js';

/**
 * Dashboard sessions, stored in the database so they survive a restart and hold on every
 * instance. The browser holds a random 256-bit token; the database holds only its SHA-256,
 * so a copy of the table cannot be replayed as a cookie.
 */

export interface SessionLifetimes {
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however much it is used. */
  absoluteMs: number;
}

export const DEFAULT_SESSION_LIFETIMES: SessionLifetimes = { idleMs: 2 * 3_600_000, absoluteMs: 24 * 3_600_000 };

/** Last-use times are written at most this often: an admin page makes several calls a second. */
const TOUCH_EVERY_MS = 60_000;

export interface StoredSession {
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The CSRF token of a session (synchronizer pattern without storage): an HMAC of a fixed
 * label keyed with the session token. Only the session's holder can compute it, it changes
 * with every sign-in, and a page of another site cannot read it.
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('modelgate csrf v1').digest('base64url');
}

/** Whether `presented` is the CSRF token of the session, compared in constant time. */
export function isCsrfTokenOf(sessionToken: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const actual = Buffer.from(presented);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export class SessionStore {
  constructor(
    private readonly db: Kysely<Database>,
    readonly lifetimes: SessionLifetimes = DEFAULT_SESSION_LIFETIMES,
  ) {}

  /** Starts a session and returns its token (the only time it exists outside the browser). */
  async create(userId: string, address: string, now: number = Date.now()): Promise<{ token: string; session: StoredSession }> {
    const token = randomBytes(32).toString('base64url');
    const session: StoredSession = { userId, createdAt: now, lastSeenAt: now, expiresAt: now + this.lifetimes.absoluteMs };
    await this.db
      .insertInto('dashboard_sessions')
      .values({
        token_hash: hashSessionToken(token),
        user_id: userId,
        address: address.slice(0, 100),
        created_at: now,
        last_seen_at: now,
        expires_at: session.expiresAt,
      })
      .execute();
    return { token, session };
  }

  /** The live session of a token, its last use moved to now; undefined when unknown or expired. */
  async use(token: string, now: number = Date.now()): Promise<StoredSession | undefined> {
    const tokenHash = hashSessionToken(token);
    const row = await this.db.selectFrom('dashboard_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    if (row === undefined) return undefined;
    if (now >= row.expires_at || now >= row.last_seen_at + this.lifetimes.idleMs) {
      await this.db.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash).execute();
      return undefined;
    }
    let lastSeenAt = row.last_seen_at;
    if (now - lastSeenAt >= TOUCH_EVERY_MS) {
      lastSeenAt = now;
      await this.db.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('token_hash', '=', tokenHash).execute();
    }
    return { userId: row.user_id, createdAt: row.created_at, lastSeenAt, expiresAt: row.expires_at };
  }

  async end(token: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('token_hash', '=', hashSessionToken(token)).execute();
  }

  /** Ends every session of an account (disabled, or its password changed). */
  async endAllOf(userId: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).execute();
  }

  /** Deletes sessions past their expiry (the rows of browsers that never signed out). */
  async deleteExpired(now: number = Date.now()): Promise<void> {
    await this.db
      .deleteFrom('dashboard_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - this.lifetimes.idleMs)]))
      .execute();
  }
}
