import type { RequestRecord } from '../logs/index.js';
import type { GatewayApp } from './app.js';
import { addKeyedRouteHook } from './keyed-routes.js';
import { isPlaygroundRoute, PLAYGROUND_PLATFORM, publicEndpointOf } from './playground-relay.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request-log record of a scoped route; routes fill it in as they go. */
    record: RequestRecord;
  }
}

function platformOf(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  // Free text from the caller: keep it short and printable.
  const cleaned = value.replace(/[^\x20-\x7e]/g, '').slice(0, 128);
  return cleaned.length > 0 ? cleaned : null;
}

export function newRecord(requestId: string, endpoint: string, platform: string | null): RequestRecord {
  return {
    requestId,
    startedAt: Date.now(),
    endpoint,
    platform,
    mode: null,
    requestedModel: null,
    resolvedModel: null,
    provider: null,
    streaming: false,
    usage: null,
    imageCount: null,
    audioSeconds: null,
    media: null,
    requestPayload: null,
    responsePayload: null,
    logDetail: null,
    errorCode: null,
    upstreamLatencyMs: null,
    admission: null,
    agent: null,
    extra: null,
  };
}

/** Gives every keyed request a record before anything else runs (auth failures are logged too). */
export function registerRequestRecordHook(app: GatewayApp): void {
  app.decorateRequest('record', null as never);
  addKeyedRouteHook(app, ({ url }) => {
    // A playground call is logged as a call of the endpoint it relays, from the dashboard.
    const endpoint = publicEndpointOf(url);
    const relayed = isPlaygroundRoute(url);
    return (request, _reply, done) => {
      request.record = newRecord(request.id, endpoint, relayed ? PLAYGROUND_PLATFORM : platformOf(request.headers['x-platform-id']));
      done();
    };
  });
}
