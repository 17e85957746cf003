/** The audit log (docs/admin-api.md#audit-log): who changed what through the admin API, and when. */

/** Who made a change: the admin token, a dashboard account, or the gateway itself (a reload of its configuration). */
export type AuditActor = { kind: 'token' } | { kind: 'user'; id: string; email: string } | { kind: 'system' };

/** What the admin token is called in the log (its `actor`). */
export const TOKEN_ACTOR = 'admin-token';
export const SYSTEM_ACTOR = 'system';

/** One change, as the code that made it describes it. */
export interface AuditChange {
  /** `<target type>.<verb>`: `key.create`, `user.disable`, `config.reload`, … */
  action: string;
  target: { type: string; id: string | null };
  /** The target before and after, as the admin API shows it (redacted again when stored); omitted when there was none. */
  before?: unknown;
  after?: unknown;
}

/** Where the change came from: the admin request's id and client address. */
export interface AuditOrigin {
  requestId?: string;
  address?: string;
}

/** An entry as the admin API lists it. */
export interface AuditEntryView {
  id: string;
  at: string;
  actor: { kind: AuditActor['kind']; name: string; id: string | null };
  action: string;
  target: { type: string; id: string | null };
  before: unknown;
  after: unknown;
  request_id: string | null;
  address: string | null;
}

/** The list's filters; each one given narrows it. */
export interface AuditFilter {
  /** An account's email or id, `admin-token` or `system`. */
  actor?: string;
  /** An action (`key.revoke`), or every action on one type of target (`key`). */
  action?: string;
  /** The target's id. */
  target?: string;
  targetType?: string;
  since?: number;
  until?: number;
}
