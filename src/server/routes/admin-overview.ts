import { Type } from '@sinclair/typebox';
import type { RouteModule } from '../app.js';
import { VIEWER_MAY_CALL } from '../admin-auth.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

/** The window the health page and `modelgate status` count recent calls over. */
export const HEALTH_WINDOW_MINUTES = 15;

/**
 * The dashboard's overview and health (docs/dashboard.md#overview, docs/admin-api.md#overview):
 * requests, errors, latency and spend over time from the request log, top models and keys,
 * and each provider's and deployment's health now (credential, recent errors and latency,
 * cooldowns in force, the last failures with their request ids).
 */
export const adminOverviewRoutes: RouteModule = async (app, context) => {
  const { providers, logs, routing } = context;

  /** Each provider: its credential, its failing state, and its calls of the window. */
  const providerHealth = async () => {
    const recent = new Map((await logs.recentProviderCalls(Date.now() - HEALTH_WINDOW_MINUTES * 60_000)).map((view) => [view.provider, view]));
    const deployments = await routing.deploymentStates();
    return {
      window_minutes: HEALTH_WINDOW_MINUTES,
      providers: providers.summaries().map((provider) => {
        const calls = recent.get(provider.name);
        return {
          name: provider.name,
          credential: provider.configured ? ('set' as const) : ('missing' as const),
          missing_variable: provider.missing?.variable ?? null,
          description: provider.description,
          state: provider.health.state,
          fault: provider.health.fault,
          since: provider.health.since,
          requests: calls?.requests ?? 0,
          errors: calls?.errors ?? 0,
          error_rate: calls?.error_rate ?? null,
          latency_p50_ms: calls?.latency_p50_ms ?? null,
          latency_p95_ms: calls?.latency_p95_ms ?? null,
          last_failures: calls?.last_failures ?? [],
          cooling_deployments: deployments.filter((deployment) => deployment.provider === provider.name && deployment.cooling).map((deployment) => `${deployment.model}/${deployment.deployment}`),
        };
      }),
      deployments,
    };
  };

  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/health',
      { config: VIEWER_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Each provider and routed deployment now: credential, recent error rate and latency, cooldowns, last failures' } },
      async () => ({ object: 'health' as const, ...(await providerHealth()) }),
    );

    admin.get(
      '/overview',
      {
        config: VIEWER_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Requests, errors, latency p50/p95 and spend over time; top models and keys; provider health and cooldowns now',
          querystring: Type.Object({ hours: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: 'the window in hours, 1 to 744 (default 24)' })) }),
        },
      },
      async (request) => {
        const hours = Math.min(24 * 31, Number(request.query.hours ?? 24));
        const bucketMinutes = hours <= 24 ? 60 : hours <= 24 * 7 ? 360 : 1440;
        const overview = await logs.overview(Date.now() - hours * 3_600_000, bucketMinutes);
        return { object: 'overview' as const, hours, ...overview, health: await providerHealth() };
      },
    );
  });
};
