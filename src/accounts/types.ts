/** Dashboard accounts: who may sign in, and what a signed-in session may do. */

/** `admin` may do everything the admin token may; `viewer` may read the request log and usage. */
export type Role = 'admin' | 'viewer';
export const ROLES: readonly Role[] = ['admin', 'viewer'];

/** An account as the admin API shows it (never the password hash). */
export interface UserView {
  id: string;
  email: string;
  role: Role;
  disabled: boolean;
  created_at: string;
  updated_at: string;
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
