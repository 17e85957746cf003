import type { Principal, Scope } from '../keys/index.js';
import type { GatewayApp } from './app.js';
import type { GatewayContext } from './context.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs; routes without one are public. */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** Set for routes with a scope, before the body is read. */
    principal: Principal;
  }
}

const ANONYMOUS: Principal = { kind: 'anonymous', fingerprint: 'anonymous' };

/**
 * Authenticates scoped routes in onRequest, before the body is read, so a caller without a
 * valid key never makes the gateway buffer or parse a large body.
 */
export function registerAuthHook(app: GatewayApp, context: GatewayContext): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    request.principal = scope === undefined ? ANONYMOUS : context.keys.authenticator.authenticate(request.headers, scope);
  });
}
