import type { FastifyRequest } from 'fastify';

/**
 * The dashboard session cookie: HttpOnly (page scripts never see the token), SameSite=Strict
 * (no other site's page or link sends it), Secure when the request came over HTTPS (directly,
 * or through a proxy the gateway trusts via `server.trustProxy`), path / so it reaches both
 * the dashboard and the admin API.
 */

export const SESSION_COOKIE = 'modelgate_session';

/**
 * A single sign-on under way: its state, bound to the browser that began it. SameSite=Lax, as
 * the provider's redirect back is a navigation from its site (a Strict cookie would not come
 * along); scoped to the sign-on routes and ended when they finish.
 */
export const SIGN_ON_COOKIE = 'modelgate_sign_on';
const SIGN_ON_PATH = '/admin/v1/sso';

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator !== -1 && part.slice(0, separator).trim() === name) {
      const value = part.slice(separator + 1).trim();
      return value.length > 0 ? value : undefined;
    }
  }
  return undefined;
}

/** The session token in a request's Cookie header, if any. */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  return cookieOf(request, SESSION_COOKIE);
}

export function signOnStateOf(request: FastifyRequest): string | undefined {
  return cookieOf(request, SIGN_ON_COOKIE);
}

export function signOnCookie(request: FastifyRequest, state: string, maxAgeSeconds: number): string {
  return `${SIGN_ON_COOKIE}=${state}; Path=${SIGN_ON_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`;
}

export function clearedSignOnCookie(request: FastifyRequest): string {
  return signOnCookie(request, '', 0);
}

function attributes(request: FastifyRequest, maxAgeSeconds: number): string {
  return `Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${request.protocol === 'https' ? '; Secure' : ''}`;
}

export function sessionCookie(request: FastifyRequest, token: string, expiresAt: number): string {
  return `${SESSION_COOKIE}=${token}; ${attributes(request, Math.max(0, Math.floor((expiresAt - Date.now()) / 1000)))}`;
}

export function clearedSessionCookie(request: FastifyRequest): string {
  return `${SESSION_COOKIE}=; ${attributes(request, 0)}`;
}
