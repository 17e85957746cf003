import type { FastifyRequest } from 'fastify';
import type { CredentialLocations } from '../formats/index.js';
import type { CredentialHeaders } from '../keys/index.js';

/**
 * The credential headers of a request as the authenticator reads them: `Authorization` and
 * `X-API-Key`, or, when the request has neither and its route's format names other places
 * (Google's clients send `x-goog-api-key`, or `?key=`), the key found there as `X-API-Key`.
 * A key from the query is used for authentication only: the request log keeps the route's
 * path, never the URL.
 */
export function credentialHeadersOf(request: FastifyRequest, locations: CredentialLocations | undefined): CredentialHeaders {
  const { headers } = request;
  if (locations === undefined || headers.authorization !== undefined || headers['x-api-key'] !== undefined) return headers;
  for (const name of locations.headers ?? []) {
    const value = headers[name];
    if (value !== undefined) return { 'x-api-key': value };
  }
  if (locations.query !== undefined) {
    const value = (request.query as Record<string, unknown> | undefined)?.[locations.query];
    if (typeof value === 'string') return { 'x-api-key': value };
  }
  return headers;
}

/**
 * Where a route's clients may send the key, as a refusal of a missing or unknown key names it:
 * the format's own places first (as its clients send it), then the bearer every route reads.
 * Undefined for a format without places of its own: the authenticator names the shared ones.
 */
export function keyPlacesOf(locations: CredentialLocations | undefined): string | undefined {
  if (locations === undefined) return undefined;
  const places = [...(locations.headers ?? []).map((name) => `"${name}: sk-mg-…"`), ...(locations.query === undefined ? [] : [`"?${locations.query}=sk-mg-…" in the URL`])];
  return `${places.join(', ')} or "Authorization: Bearer sk-mg-…"`;
}
