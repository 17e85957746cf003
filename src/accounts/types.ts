/** Dashboard accounts: who may sign in, and what a signed-in session may do. */

/**
 * `admin` may do everything the admin token may; `viewer` may read the request log and usage;
 * `team_admin` sees and manages the keys, log, usage and agents of its teams' projects only.
 */
export type Role = 'admin' | 'viewer' | 'team_admin';
export const ROLES: readonly Role[] = ['admin', 'viewer', 'team_admin'];

/** An account as the admin API shows it (never the password hash). */
export interface UserView {
  id: string;
  email: string;
  role: Role;
  /** The teams a `team_admin` manages; empty for the other roles. */
  team_ids: string[];
  /** Whether the account was made or linked by single sign-on (its role then follows the provider's groups). */
  sso: boolean;
  disabled: boolean;
  created_at: string;
  updated_at: string;
}

/** A role with the teams it applies to (`team_admin` only). */
export interface RoleGrant {
  role: Role;
  teamIds: readonly string[];
}

/** The signed-in session as the admin API shows it to its own browser. */
export interface SessionView {
  user: UserView;
  /** Send as `x-csrf-token` on every state-changing admin API call made with this session. */
  csrf_token: string;
  /** When the session ends whatever happens (its idle expiry may come sooner). */
  expires_at: string;
  idle_timeout_seconds: number;
}
