import cluster from 'node:cluster';
import { describeRedis, describeStorage, workerCount } from '../../config/index.js';
import { API_VERSION, PRODUCT_VERSION } from '../api-version.js';
import type { RouteModule } from '../app.js';
import { HEALTH_WINDOW_MINUTES } from './admin-overview.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

/** How long `GET /admin/v1/status` waits for the database before it reports it unreachable. */
export const STORAGE_PROBE_MS = 2_000;

/**
 * `GET /admin/v1/status`: what `modelgate status` shows. One answer about the instance that
 * took the request: version, storage and Redis (reachable or not), providers (configured, and
 * failing since when), workers and the request log's queue.
 */
export const adminStatusRoutes: RouteModule = async (app, context) => {
  const { config, database, providers, limits, logs, mcp, routing } = context;
  const startedAt = new Date();

  await registerAdminRoutes(app, context, (admin) => {
    admin.get('/status', { schema: { ...ADMIN_SCHEMA, summary: 'Health of this instance: storage, Redis, providers, workers' } }, async () => {
      const reachable = await database.answers(STORAGE_PROBE_MS);
      const limiter = limits.state();
      const providerList = providers.summaries();
      // Recent calls from the request log and the cooldowns in force, as the health page shows them.
      const recent = new Map((await logs.recentProviderCalls(Date.now() - HEALTH_WINDOW_MINUTES * 60_000)).map((view) => [view.provider, view]));
      const deployments = await routing.deploymentStates();
      const failing = providerList.some((provider) => provider.health.state === 'failing') || mcp.summaries().some((server) => server.health.state === 'unavailable');
      return {
        object: 'status' as const,
        status: reachable && !failing && !limiter.fallbackActive ? ('ok' as const) : ('degraded' as const),
        version: PRODUCT_VERSION,
        api_version: API_VERSION,
        started_at: startedAt.toISOString(),
        uptime_seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
        storage: { kind: database.kind, location: describeStorage(config), reachable },
        redis: {
          configured: config.redisUrl !== undefined,
          location: describeRedis(config),
          // While Redis is away, limits fall back to this instance's own counters (docs/limits.md).
          reachable: config.redisUrl === undefined ? null : !limiter.fallbackActive,
        },
        providers: providerList.map((provider) => ({
          name: provider.name,
          configured: provider.configured,
          missing_variable: provider.missing?.variable ?? null,
          description: provider.description,
          ...provider.health,
          recent: {
            window_minutes: HEALTH_WINDOW_MINUTES,
            requests: recent.get(provider.name)?.requests ?? 0,
            errors: recent.get(provider.name)?.errors ?? 0,
            error_rate: recent.get(provider.name)?.error_rate ?? null,
            latency_p50_ms: recent.get(provider.name)?.latency_p50_ms ?? null,
            latency_p95_ms: recent.get(provider.name)?.latency_p95_ms ?? null,
            last_failures: recent.get(provider.name)?.last_failures ?? [],
          },
        })),
        deployments,
        workers: { count: workerCount(config), this_worker: cluster.isWorker ? cluster.worker!.id : null, pid: process.pid },
        log_queue_depth: logs.writer.depth,
        mcp_servers: mcp.summaries().map(({ name, transport, health }) => ({
          name,
          transport,
          state: health.state,
          since: new Date(health.since).toISOString(),
          reason: health.reason,
        })),
      };
    });
  });
};
