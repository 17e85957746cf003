import { Type } from '@sinclair/typebox';
import type { RouteModule } from '../app.js';
import type { GatewayContext } from '../context.js';
import { VIEWER_MAY_CALL } from '../admin-auth.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';
import { budgetsWithSpend } from './admin-budgets.js';

/** How many budgets the overview lists: those nearest their limit. */
const NEAREST_BUDGETS = 5;

/** The budgets nearest their limit: spent ÷ limit of the amount most used (USD or tokens), largest first. */
async function nearestBudgets(context: GatewayContext) {
  const budgets = await budgetsWithSpend(context, await context.budgets.store.list());
  return budgets
    .flatMap((budget) => {
      if (budget.spent === undefined) return [];
      const shares = [budget.usd === null ? 0 : budget.spent.usd / budget.usd, budget.tokens === null ? 0 : budget.spent.tokens / budget.tokens];
      return [
        {
          id: budget.id,
          level: budget.level,
          target: budget.target,
          period: budget.period,
          usd: budget.usd,
          tokens: budget.tokens,
          spent_usd: budget.spent.usd,
          spent_tokens: budget.spent.tokens,
          used: Math.max(...shares),
          resets_at: budget.spent.resets_at,
        },
      ];
    })
    .sort((a, b) => b.used - a.used)
    .slice(0, NEAREST_BUDGETS);
}

/** The window the health page and `modelgate status` count recent calls over. */
export const HEALTH_WINDOW_MINUTES = 15;

/**
 * The dashboard's overview and health (docs/dashboard.md#overview, docs/admin-api.md#overview):
 * requests, errors, latency and spend over time from the request log, top models, keys, teams
 * and end users, the budgets nearest their limit,
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
          summary: 'Requests, errors, latency p50/p95 and spend over time; top models, keys, teams and end users; budgets nearest their limit; provider health and cooldowns now',
          querystring: Type.Object({ hours: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: 'the window in hours, 1 to 744 (default 24)' })) }),
        },
      },
      async (request) => {
        const hours = Math.min(24 * 31, Number(request.query.hours ?? 24));
        const bucketMinutes = hours <= 24 ? 60 : hours <= 24 * 7 ? 360 : 1440;
        const overview = await logs.overview(Date.now() - hours * 3_600_000, bucketMinutes);
        return { object: 'overview' as const, hours, ...overview, budgets_nearest_limit: await nearestBudgets(context), health: await providerHealth() };
      },
    );
  });
};
