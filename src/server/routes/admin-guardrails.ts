import { Type } from '@sinclair/typebox';
import { GatewayError } from '../../errors/index.js';
import type { RouteModule } from '../app.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

const TestBody = Type.Object(
  {
    text: Type.String({ maxLength: 1_000_000, description: 'the sample text' }),
    stage: Type.Union([Type.Literal('input'), Type.Literal('output')], { default: 'input', description: 'the stage it is checked as' }),
  },
  { additionalProperties: false },
);

/**
 * The configured guardrails through the admin API (docs/guardrails.md): the list, and a dry
 * run of one on a sample text, which calls no model and records nothing.
 */
export const adminGuardrailsRoutes: RouteModule = async (app, context) => {
  const { guardrails } = context;
  await registerAdminRoutes(app, context, (admin) => {
    admin.get('/guardrails', { schema: { ...ADMIN_SCHEMA, summary: 'The configured guardrails' } }, async () => ({
      object: 'list' as const,
      data: (guardrails?.policies ?? []).map((policy) => ({
        name: policy.name,
        check: policy.check,
        stage: [...policy.stages],
        action: policy.action,
        on_error: policy.failClosed ? 'closed' : 'open',
        apply: { all: policy.apply.all, keys: [...policy.apply.keys], projects: [...policy.apply.projects], models: [...policy.apply.models] },
        window: policy.window,
        source: 'config' as const,
      })),
    }));

    admin.post(
      '/guardrails/:name/test',
      { config: { auditExempt: 'a dry run of a guardrail on a sample text; changes nothing' }, schema: { ...ADMIN_SCHEMA, summary: 'Dry-run a guardrail on a sample text', params: Type.Object({ name: Type.String() }), body: TestBody } },
      async (request) => {
        const { name } = request.params;
        const outcome = await guardrails?.dryRun(name, request.body.stage, request.body.text, context.calls.checker());
        if (outcome === undefined) throw new GatewayError('not_found', `There is no guardrail "${name}"; GET /admin/v1/guardrails lists them.`, { param: 'name' });
        const { verdict } = outcome;
        return {
          guardrail: verdict.guardrail,
          stage: verdict.stage,
          action: verdict.action,
          outcome: verdict.outcome,
          matched: verdict.matched,
          latency_ms: verdict.latencyMs,
          // The sample is the operator's own: what a masking guardrail would send on.
          masked_text: outcome.text,
        };
      },
    );
  });
};
