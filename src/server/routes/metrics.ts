import { PROMETHEUS_CONTENT_TYPE } from '../../metrics/index.js';
import type { RouteModule } from '../app.js';

/** GET /metrics: Prometheus text format, authorised by the admin token (scrape with a bearer token). */
export const metricsRoutes: RouteModule = async (app, context) => {
  await app.register(async (scope) => {
    scope.addHook('onRequest', context.adminAuthentication);
    scope.get('/metrics', { schema: { hide: true, summary: 'Prometheus metrics', tags: ['admin'] } }, async (_request, reply) =>
      reply.type(PROMETHEUS_CONTENT_TYPE).send(await context.metrics.scrape()),
    );
  });
};
