import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { isCsrfTokenOf, type Accounts, type Role, type SessionPrincipal } from '../accounts/index.js';
import { GatewayError } from '../errors/index.js';
import { SECRET_PREFIX } from '../keys/index.js';
import { sessionTokenOf } from './session-cookie.js';

/**
 * The one authorisation path of the admin API (/admin/v1/*, /metrics; docs/admin-api.md):
 * the admin token (`Authorization: Bearer …`) or a signed-in dashboard session (its
 * cookie). A session may do what the token may, limited by its account's role; its
 * state-changing calls must also carry the session's CSRF token in `x-csrf-token`.
 */

/** Who an admin request is from. */
export type AdminPrincipal = { kind: 'token' } | ({ kind: 'session'; token: string } & SessionPrincipal);

/**
 * Route config of the admin routes a `viewer` may call (reading the request log and usage).
 * Every other admin route needs the `admin` role or the admin token, unless a `team_admin` may
 * call it too.
 */
export const VIEWER_MAY_CALL = { viewerMayCall: true } as const;

/**
 * Route config of the admin routes a `team_admin` may call: the route answers within the
 * projects of the account's teams (`projectScopeOf` in routes/admin-scope.ts). Any route
 * without it refuses a team admin with 403 `insufficient_role`.
 */
export const TEAM_ADMIN_MAY_CALL = { teamAdminMayCall: true } as const;

/** Routes every signed-in account may call (its own session, reading the log and usage). */
export const EVERY_ROLE_MAY_CALL = { ...VIEWER_MAY_CALL, ...TEAM_ADMIN_MAY_CALL } as const;

type RoleConfig = Partial<{ viewerMayCall: true; teamAdminMayCall: true }>;

function roleMayCall(role: Role, config: RoleConfig): boolean {
  if (role === 'admin') return true;
  return role === 'viewer' ? config.viewerMayCall === true : config.teamAdminMayCall === true;
}

const REFUSALS: Record<Exclude<Role, 'admin'>, string> = {
  viewer: 'This account has the viewer role: it may read the request log and usage only. Ask an administrator.',
  team_admin: "This account is a team admin: it may manage its teams' keys, agents, budgets, request log and usage only. Ask an administrator.",
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const principals = new WeakMap<FastifyRequest, AdminPrincipal>();

/** The principal the admin hook authorised for this request (routes that answer by role). */
export function adminPrincipalOf(request: FastifyRequest): AdminPrincipal {
  const principal = principals.get(request);
  if (principal === undefined) throw new Error('adminPrincipalOf called on a route without the admin hook');
  return principal;
}

/** Whether the request may see what only administrators see (the token, or an `admin` session). */
export function isAdministrator(request: FastifyRequest): boolean {
  const principal = adminPrincipalOf(request);
  return principal.kind === 'token' || principal.user.role === 'admin';
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export function adminAuthHook(adminToken: string, accounts: Accounts): (request: FastifyRequest) => Promise<void> {
  // Comparing fixed-length digests keeps the comparison constant-time whatever was sent.
  const expected = digest(adminToken);

  const byToken = (authorization: string): AdminPrincipal => {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? '';
    if (token.startsWith(SECRET_PREFIX)) {
      throw new GatewayError('invalid_api_key', 'Model API keys (sk-mg-…) are not accepted by the admin API; send the admin token instead.');
    }
    if (!timingSafeEqual(digest(token), expected)) {
      throw new GatewayError('invalid_api_key', 'The admin token is not valid. Send the token the gateway was started with.');
    }
    return { kind: 'token' };
  };

  const bySession = async (request: FastifyRequest, token: string): Promise<AdminPrincipal> => {
    const principal = await accounts.authenticate(token);
    if (principal === undefined) {
      throw new GatewayError('session_expired', 'The dashboard session has ended (idle too long, expired or signed out). Sign in again.');
    }
    if (!SAFE_METHODS.has(request.method) && !isCsrfTokenOf(token, headerValue(request.headers['x-csrf-token']))) {
      throw new GatewayError(
        'csrf_token_invalid',
        'A change made with a dashboard session needs the x-csrf-token header holding the csrf_token of GET /admin/v1/session.',
      );
    }
    const { role } = principal.user;
    if (role !== 'admin' && !roleMayCall(role, request.routeOptions.config as RoleConfig)) throw new GatewayError('insufficient_role', REFUSALS[role]);
    return { kind: 'session', token, ...principal };
  };

  return async (request) => {
    const authorization = request.headers.authorization;
    const sessionToken = sessionTokenOf(request);
    let principal: AdminPrincipal;
    if (authorization !== undefined && authorization.length > 0) principal = byToken(authorization);
    else if (sessionToken !== undefined) principal = await bySession(request, sessionToken);
    else {
      throw new GatewayError(
        'missing_api_key',
        'The admin API needs the admin token as "Authorization: Bearer <admin token>" (MODELGATE_ADMIN_TOKEN, or the admin-token file in the data dir), or a signed-in dashboard session.',
      );
    }
    principals.set(request, principal);
  };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
