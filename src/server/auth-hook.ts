import type { Authenticator, Principal, Scope } from '../keys/index.js';
import { credentialHeadersOf, keyPlacesOf } from './credentials.js';
import { addKeyedRouteHook, type RequestHook } from './keyed-routes.js';
import { isPlaygroundRoute } from './playground-relay.js';
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

/**
 * Authenticates scoped routes in onRequest, before the body is read, so a caller without a
 * valid key never makes the gateway buffer or parse a large body. Public routes leave
 * `principal` null.
 */
export function registerAuthHook(app: GatewayApp, context: GatewayContext): void {
  app.decorateRequest('principal', null as never);
  const { authenticator } = context.keys;
  // Callback style: no promise per request with a known key. A thrown GatewayError reaches the
  // error handler; only a secret the cache does not hold waits for the store.
  addKeyedRouteHook(app, ({ url, scope, credentials }) => {
    if (isPlaygroundRoute(url)) return playgroundPrincipalHook(authenticator, scope);
    const sendAs = keyPlacesOf(credentials);
    return (request, _reply, done) => {
      const principal = authenticator.authenticate(credentialHeadersOf(request, credentials), scope, sendAs);
      if (!(principal instanceof Promise)) {
        request.principal = principal;
        done();
        return;
      }
      principal.then((found) => {
        request.principal = found;
        done();
      }, done);
    };
  });
}

/**
 * A relayed playground call (playground-relay.ts) is made as the key its path names. The
 * admin hook of its scope ran first: only an administrator gets here.
 */
function playgroundPrincipalHook(authenticator: Authenticator, scope: Scope): RequestHook {
  return (request, _reply, done) => {
    request.principal = authenticator.authenticateKeyId((request.params as { keyId: string }).keyId, scope);
    done();
  };
}
