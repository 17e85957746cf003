import { extractSecret, SECRET_PREFIX } from '../../keys/index.js';
import { PROMETHEUS_CONTENT_TYPE } from '../../metrics/index.js';
import type { RouteModule } from '../app.js';

/**
 * GET /metrics: Prometheus text format. A scrape is authorised by a key with the `metrics:read`
 * scope (a credential that reads metrics and nothing else: it cannot call the admin API), or
 * by the admin credentials (docs/metrics.md).
 */
export const metricsRoutes: RouteModule = async (app, context) => {
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request) => {
      if (extractSecret(request.headers)?.startsWith(SECRET_PREFIX) === true) {
        await context.keys.authenticator.authenticate(request.headers, 'metrics:read');
        return;
      }
      await context.adminAuthentication(request);
    });
    scope.get('/metrics', { schema: { hide: true, summary: 'Prometheus metrics', tags: ['admin'] } }, async (_request, reply) =>
      reply.type(PROMETHEUS_CONTENT_TYPE).send(await context.metrics.scrape()),
    );
  });
};
