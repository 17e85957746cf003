import type { RequestCall } from '../calls/index.js';
import type { GatewayApp } from './app.js';
import type { GatewayContext } from './context.js';
import { addKeyedRouteHook } from './keyed-routes.js';
import { isPlaygroundRoute, PLAYGROUND_PLATFORM, publicEndpointOf } from './playground-relay.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The model-call path's call of a keyed request: the one writer of its request-log record. */
    call: RequestCall;
  }
}

/** The caller's X-Platform-ID as the request log keeps it: the first value, printable ASCII, at most 128 characters; null for none. */
export function platformOf(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  // Free text from the caller: keep it short and printable.
  const cleaned = value.replace(/[^\x20-\x7e]/g, '').slice(0, 128);
  return cleaned.length > 0 ? cleaned : null;
}

/** Begins every keyed request's call before anything else runs (auth failures are logged too). */
export function registerRequestRecordHook(app: GatewayApp, context: GatewayContext): void {
  app.decorateRequest('call', null as never);
  addKeyedRouteHook(app, ({ url, path }) => {
    // A playground call is logged as a call of the endpoint it relays, from the dashboard; a
    // wildcard route as the path it documents (never the URL: a key may be in its query).
    const relayed = isPlaygroundRoute(url);
    const endpoint = relayed ? publicEndpointOf(path) : path;
    return (request, _reply, done) => {
      request.call = context.calls.begin({
        requestId: request.id,
        endpoint,
        platform: relayed ? PLAYGROUND_PLATFORM : platformOf(request.headers['x-platform-id']),
        startedAt: Date.now(),
        endUserHeader: request.headers['x-end-user-id'],
      });
      done();
    };
  });
}
