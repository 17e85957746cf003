import type { Kysely } from 'kysely';
import { GatewayError } from '../errors/index.js';
import type { Database } from '../storage/index.js';
import { decoyPasswordHash, verifyPassword } from './password.js';
import { csrfTokenOf, SessionStore, type SessionLifetimes, type StoredSession } from './session-store.js';
import { SignInThrottle, type SharedSignInCounts, type ThrottleLimits } from './sign-in-throttle.js';
import type { Role, RoleGrant, SessionView } from './types.js';
import { normalizeEmail, toUserView, UserStore, type UserRow } from './user-store.js';

/** A signed-in dashboard user, as the admin API's authorisation sees it. */
export interface SessionPrincipal {
  user: UserRow;
  session: StoredSession;
}

export interface SignedIn {
  /** Goes into the session cookie, never into a response body. */
  token: string;
  view: SessionView;
}

export interface AccountsOptions {
  lifetimes?: SessionLifetimes;
  throttle?: ThrottleLimits;
  /** The clock the throttle reads (tests hold it still). */
  now?: () => number;
  /** Checks a password against its stored hash (tests count the checks). */
  verify?: (password: string, stored: string) => Promise<boolean>;
  /** Sign-in attempts counted for every instance (Redis); without them each instance counts its own in-flight checks. */
  sharedCounts?: SharedSignInCounts;
}

const WRONG_CREDENTIALS = 'The email or password is not right. Check both and try again.';

/** Dashboard accounts and their sessions: sign-in, the session behind a cookie, sign-out. */
export class Accounts {
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly throttle: SignInThrottle;
  private readonly now: () => number;
  private readonly verify: (password: string, stored: string) => Promise<boolean>;

  constructor(db: Kysely<Database>, options: AccountsOptions = {}) {
    this.users = new UserStore(db);
    this.sessions = new SessionStore(db, options.lifetimes);
    this.throttle = new SignInThrottle(db, options.throttle, options.sharedCounts);
    this.now = options.now ?? Date.now;
    this.verify = options.verify ?? verifyPassword;
  }

  /**
   * Checks the password and starts a session. An unknown email, a disabled account and a
   * wrong password get the same answer after the same work (a scrypt hash is computed in
   * each case), so the answer does not tell which emails have accounts.
   */
  async signIn(email: string, password: string, address: string): Promise<SignedIn> {
    const normalized = normalizeEmail(email);
    const now = this.now();
    const admitted = await this.throttle.admit(normalized, address, now);
    if ('wait' in admitted) {
      throw new GatewayError(
        'rate_limit_exceeded',
        `Too many failed sign-ins for this account or from this address. Try again in ${admitted.wait} seconds; the right password is admitted once the wait is over.`,
        { retryAfterSeconds: admitted.wait },
      );
    }
    let user: UserRow | undefined;
    try {
      user = await this.users.findByEmail(normalized);
      const matches = await this.verify(password, user?.password_hash ?? (await decoyPasswordHash()));
      if (user === undefined || !matches || user.disabled === 1) {
        await this.throttle.recordFailure(normalized, address, now);
        throw new GatewayError('invalid_credentials', WRONG_CREDENTIALS);
      }
      await this.throttle.succeeded(normalized, address);
    } finally {
      admitted.attempt.done();
    }
    return this.startSession(user, address);
  }

  /**
   * Signs in the account a single sign-on names (made, or its role and teams updated from the
   * provider's groups); a disabled account stays out.
   */
  async signInBySso(identity: { subject: string; email: string; emailVerified: boolean }, grant: RoleGrant, address: string): Promise<SignedIn> {
    const user = await this.users.signedInBySso(identity.subject, identity.email, identity.emailVerified, grant);
    if (user.disabled === 1) throw new GatewayError('insufficient_role', 'This dashboard account is disabled. Ask an administrator to enable it.');
    return this.startSession(user, address);
  }

  private async startSession(user: UserRow, address: string): Promise<SignedIn> {
    const { token, session } = await this.sessions.create(user.id, address);
    return { token, view: this.viewOf(token, { user, session }) };
  }

  /** The user behind a session token, or undefined when the session ended or the account was disabled. */
  async authenticate(token: string): Promise<SessionPrincipal | undefined> {
    const session = await this.sessions.use(token);
    if (session === undefined) return undefined;
    const user = await this.users.find(session.userId);
    if (user === undefined || user.disabled === 1) return undefined;
    return { user, session };
  }

  viewOf(token: string, principal: SessionPrincipal): SessionView {
    return {
      user: toUserView(principal.user),
      csrf_token: csrfTokenOf(token),
      expires_at: new Date(principal.session.expiresAt).toISOString(),
      idle_timeout_seconds: this.sessions.lifetimes.idleMs / 1000,
    };
  }

  signOut(token: string): Promise<void> {
    return this.sessions.end(token);
  }

  createUser(email: string, password: string, role: Role, teamIds: readonly string[] = []): Promise<UserRow> {
    return this.users.create(email, password, { role, teamIds });
  }

  /** A new role ends the account's sessions: a narrowed account never keeps a wider session. */
  async setRole(idOrEmail: string, grant: RoleGrant): Promise<UserRow> {
    const row = await this.users.setRole(idOrEmail, grant);
    await this.sessions.endAllOf(row.id);
    return row;
  }

  /** Disabling an account ends its sessions at once. */
  async setDisabled(idOrEmail: string, disabled: boolean): Promise<UserRow> {
    const row = await this.users.setDisabled(idOrEmail, disabled);
    if (disabled) await this.sessions.endAllOf(row.id);
    return row;
  }

  /** A new password ends the account's sessions: whoever knew the old one is signed out. */
  async resetPassword(idOrEmail: string, password: string): Promise<UserRow> {
    const row = await this.users.setPassword(idOrEmail, password);
    await this.sessions.endAllOf(row.id);
    return row;
  }
}
