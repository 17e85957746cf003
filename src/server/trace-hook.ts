import type { GatewayApp } from './app.js';
import type { GatewayContext } from './context.js';
import { addKeyedRouteHook } from './keyed-routes.js';

/**
 * Starts the span of every keyed request when traces are exported (the request-log hook
 * ends it from the finished record). Without a collector no hook is added at all.
 */
export function registerTraceHook(app: GatewayApp, context: GatewayContext): void {
  const { tracing } = context;
  if (tracing === undefined) return;
  addKeyedRouteHook(app, () => (request, _reply, done) => {
    tracing.startRequest(request.call, request.method, request.headers);
    done();
  });
}
