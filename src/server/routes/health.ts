import { Type } from '@sinclair/typebox';
import type { LimiterState } from '../../limits/index.js';
import type { RouteModule } from '../app.js';
import { STORAGE_PROBE_MS } from './admin-status.js';

const HealthResponseSchema = Type.Object({ status: Type.Literal('alive') });

const ReadinessResponseSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
  checks: Type.Object({
    // `waiting` and `unchecked`: the answer of a gateway still waiting for its database at start-up (src/server/standby.ts).
    storage: Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('waiting')]),
    redis: Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('not_configured'), Type.Literal('unchecked')]),
    providers: Type.Union([Type.Literal('ok'), Type.Literal('none_configured'), Type.Literal('unchecked')]),
    mcp_servers: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.Literal('ok'), Type.Literal('connecting'), Type.Literal('unavailable')]), {
        description: 'each MCP server by name, when any is configured (docs/mcp.md); one that is unavailable does not make the instance not ready: /mcp names it to callers',
      }),
    ),
  }),
  missing: Type.Array(Type.String(), { description: 'what keeps the instance from serving, and what to check; empty when ready' }),
  limits: Type.Optional(
    Type.Union([Type.Literal('shared'), Type.Literal('local'), Type.Literal('fail_closed'), Type.Literal('in_process')], {
      description: 'how key limits are counted now: shared (Redis), local (Redis away, each instance on its own), fail_closed (Redis away, limited keys refused with 503), in_process (no Redis)',
    }),
  ),
  limits_share: Type.Optional(
    Type.Object(
      {
        instances: Type.Integer({ minimum: 1, description: 'instances sharing the Redis counters, this one included (announced through Redis within 30 s; during an outage, as seen when it began)' }),
        fraction: Type.Number({ description: 'the share of each limit this instance enforces on its own while limits are local: 1 ÷ instances' }),
      },
      { description: 'with REDIS_URL: how a limit is divided among instances while Redis is away (limits.redisOutage: local)' },
    ),
  ),
});

/**
 * `GET /healthz` and `GET /readyz` for load balancers and orchestrators; no credential. The
 * first says the process serves HTTP and touches nothing else; the second asks the database
 * and Redis (when configured) for an answer and checks that a provider is configured.
 */
export const healthRoutes: RouteModule = (app, context) => {
  const { database, limits, providers, mcp } = context;

  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness',
        description: 'The process is up and serves HTTP. Asks nothing of storage or providers: restart the process only when this fails.',
        tags: ['status'],
        response: { 200: HealthResponseSchema },
      },
    },
    async () => ({ status: 'alive' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness',
        description: `200 when the database answers within ${STORAGE_PROBE_MS} ms, Redis answers (when REDIS_URL is set) and at least one provider is configured; 503 with what is missing otherwise.`,
        tags: ['status'],
        response: { 200: ReadinessResponseSchema, 503: ReadinessResponseSchema },
      },
    },
    async (_request, reply) => {
      const [storageOk, redisOk] = await Promise.all([database.answers(STORAGE_PROBE_MS), limits.sharedCountersAnswer()]);
      const providerOk = providers.summaries().some((provider) => provider.configured);
      const missing: string[] = [];
      if (!storageOk) missing.push(`the database (${database.kind}) did not answer within ${STORAGE_PROBE_MS} ms; check DATABASE_URL and that the database is up`);
      if (redisOk === false) missing.push(`Redis did not answer within limits.redisCommandTimeoutMs; check REDIS_URL and that Redis is up`);
      if (!providerOk) missing.push('no provider is configured; set a provider API key (docs/providers.md)');
      const ready = missing.length === 0;
      const mcpServers = mcp.summaries();
      const state = limits.state();
      return reply.code(ready ? 200 : 503).send({
        status: ready ? ('ready' as const) : ('not_ready' as const),
        checks: {
          storage: storageOk ? ('ok' as const) : ('unreachable' as const),
          redis: redisOk === null ? ('not_configured' as const) : redisOk ? ('ok' as const) : ('unreachable' as const),
          providers: providerOk ? ('ok' as const) : ('none_configured' as const),
          ...(mcpServers.length === 0 ? {} : { mcp_servers: Object.fromEntries(mcpServers.map(({ name, health }) => [name, health.state === 'ready' ? ('ok' as const) : health.state])) }),
        },
        missing,
        limits: limitsMode(state),
        ...(state.instancesSeen === undefined ? {} : { limits_share: { instances: state.instancesSeen, fraction: 1 / state.instancesSeen } }),
      });
    },
  );
};

/** How key limits are counted now, for /readyz. */
function limitsMode(state: LimiterState): 'shared' | 'local' | 'fail_closed' | 'in_process' {
  if (state.backend === 'memory') return 'in_process';
  if (!state.fallbackActive) return 'shared';
  return state.outageMode === 'failClosed' ? 'fail_closed' : 'local';
}
