import type { FastifyRequest } from 'fastify';

/**
 * The playground relay (docs/decisions/0016): the admin API serves the model endpoints again
 * under `/admin/v1/playground/keys/{keyId}/v1/…`, with the same route modules, so a dashboard
 * session makes a call as one of the gateway's keys without holding its secret. The admin
 * hook authorises the session (and its CSRF token); the key named in the path is the call's
 * principal, and everything after that — allow-list, limits, caps, the request log — is what a
 * direct call with that key's secret gets.
 */

/** The admin scope's sub-prefix the relayed routes are registered under. */
export const PLAYGROUND_PREFIX = '/playground/keys/:keyId';
const FULL_PREFIX = `/admin/v1${PLAYGROUND_PREFIX}`;

/** What the request log names as the platform of a relayed call. */
export const PLAYGROUND_PLATFORM = 'dashboard-playground';

/** Whether a route (by its registered URL) is a relayed model endpoint. */
export function isPlaygroundRoute(url: string | undefined): boolean {
  return url !== undefined && url.startsWith(`${FULL_PREFIX}/`);
}

/** The public endpoint a route (by its logged path) serves: `/v1/chat/completions` for its relayed copy too. */
export function publicEndpointOf(url: string): string {
  return isPlaygroundRoute(url) ? url.slice(FULL_PREFIX.length) : url;
}

/** The key a relayed request calls as (from its path); undefined for any other request. */
export function playgroundKeyIdOf(request: FastifyRequest): string | undefined {
  if (!isPlaygroundRoute(request.routeOptions.url)) return undefined;
  return (request.params as { keyId?: string }).keyId;
}
