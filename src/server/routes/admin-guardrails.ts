import { Type } from '@sinclair/typebox';
import { GatewayError } from '../../errors/index.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';

const Entry = Type.Record(Type.String(), Type.Unknown(), { description: "a guardrails[] entry as the config file takes it (docs/guardrails.md); a webhook's key by the name of its environment variable" });
const NameParams = Type.Object({ name: Type.String({ maxLength: 64 }) });

const TestBody = Type.Object(
  {
    text: Type.String({ maxLength: 1_000_000, description: 'the sample text' }),
    stage: Type.Union([Type.Literal('input'), Type.Literal('output')], { default: 'input', description: 'the stage it is checked as' }),
  },
  { additionalProperties: false },
);

/**
 * Guardrails through the admin API (docs/admin-api.md#guardrails): the config file's
 * (read-only) and those defined here, which are created, changed and deleted live and
 * audited; and a dry run of one on a sample text, which records nothing.
 */
export const adminGuardrailsRoutes: RouteModule = async (app, context) => {
  const { guardrails, storedGuardrails } = context;
  await registerAdminRoutes(app, context, (admin) => {
    admin.get('/guardrails', { schema: { ...ADMIN_SCHEMA, summary: 'The guardrails: the config file\'s (read-only) and those defined here, in the order they run' } }, async () => ({
      object: 'list' as const,
      data: await storedGuardrails.list(),
    }));

    admin.post('/guardrails', { schema: { ...ADMIN_SCHEMA, summary: 'Define a guardrail; it applies to new calls on every instance within about a second', body: Entry } }, async (request, reply) => {
      const after = await storedGuardrails.create(request.body);
      request.log.info({ guardrail: after.name, check: after.check }, 'admin: guardrail created');
      await recordChange(context.audit, request, { action: 'guardrail.create', target: { type: 'guardrail', id: after.name }, before: null, after });
      reply.code(201);
      return after;
    });

    admin.patch(
      '/guardrails/:name',
      { schema: { ...ADMIN_SCHEMA, summary: 'Change a guardrail defined here: each field given replaces its own (options whole)', params: NameParams, body: Entry } },
      async (request) => {
        const { before, after } = await storedGuardrails.update(request.params.name, request.body);
        request.log.info({ guardrail: after.name }, 'admin: guardrail changed');
        await recordChange(context.audit, request, { action: 'guardrail.update', target: { type: 'guardrail', id: after.name }, before, after });
        return after;
      },
    );

    admin.delete('/guardrails/:name', { schema: { ...ADMIN_SCHEMA, summary: 'Delete a guardrail defined here', params: NameParams } }, async (request, reply) => {
      const before = await storedGuardrails.remove(request.params.name);
      request.log.info({ guardrail: before.name }, 'admin: guardrail deleted');
      await recordChange(context.audit, request, { action: 'guardrail.delete', target: { type: 'guardrail', id: before.name }, before });
      return reply.code(204).send();
    });

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
