import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { RouteModule } from '../app.js';
import { adminPrincipalOf } from '../admin-auth.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';
import { listOf, Nullable } from './schema-helpers.js';

const Fields = Type.Record(Type.String(), Type.Unknown());
const Source = Type.Union([Type.Literal('shipped'), Type.Literal('config'), Type.Literal('stored')]);
const Facts = {
  note: Nullable(Type.String()),
  updated_by: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
};

const ModelSettingView = Type.Object({
  id: Type.String(),
  provider: Nullable(Type.String()),
  upstream_id: Nullable(Type.String()),
  mode: Nullable(Type.String()),
  enabled: Type.Boolean(),
  listed: Type.Boolean({ description: 'whether GET /v1/models lists it now' }),
  source: Source,
  origin: Type.String({ description: 'where it comes from: shipped catalog, config file: catalog.models[N], admin API' }),
  read_only: Type.Boolean(),
  override: Type.Unknown({ description: 'the admin API\'s setting of it, a catalog.models entry without its id; null when none' }),
  entry: Type.Unknown({ description: 'the entry GET /v1/models shows for it; null when it is disabled' }),
  ...Facts,
});

const AliasView = Type.Object({
  alias: Type.String(),
  target: Type.String(),
  kind: Type.Union([Type.Literal('service'), Type.Literal('legacy')]),
  source: Source,
  origin: Type.String(),
  read_only: Type.Boolean(),
  ...Facts,
});

const RoutingView = Type.Object({
  model: Type.String(),
  entry: Type.Unknown({ description: 'the routing entry, defaults filled in' }),
  source: Type.Union([Type.Literal('config'), Type.Literal('stored')]),
  origin: Type.String(),
  read_only: Type.Boolean(),
  in_force: Type.Boolean(),
  ...Facts,
});

const IdParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const AliasParams = Type.Object({ alias: Type.String({ maxLength: 200 }) });
const ModelParams = Type.Object({ model: Type.String({ maxLength: 200 }) });

/** Who made a stored setting, in words: the account's email, or the admin token. */
function byWhom(request: FastifyRequest): string {
  const principal = adminPrincipalOf(request);
  return principal.kind === 'token' ? 'admin token' : principal.user.email;
}

/**
 * The live catalog and routing through the admin API (docs/admin-api.md#models-and-prices,
 * docs/admin-api.md#routing): models enabled, added and priced, aliases, routing entries,
 * layered under the config file's (read-only here) and in force at once on every instance.
 */
export const adminLiveSettingsRoutes: RouteModule = async (app, context) => {
  const live = context.liveSettings;
  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/models/settings',
      { schema: { ...ADMIN_SCHEMA, summary: 'Every model of the catalog (disabled ones too) with where it comes from', response: { 200: listOf(ModelSettingView) } } },
      async () => ({ object: 'list' as const, data: live.models() }),
    );

    admin.put(
      '/models/settings/:id',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Add a model, or change one of the shipped catalog: a catalog.models entry without its id (disabled, pricing, limits, …) and a note',
          params: IdParams,
          body: Fields,
          response: { 200: ModelSettingView },
        },
      },
      async (request) => {
        const { before, after } = await live.putModel(request.params.id, request.body, byWhom(request));
        request.log.info({ model: after.id }, 'admin: model set');
        await recordChange(context.audit, request, { action: 'model.set', target: { type: 'model', id: after.id }, before, after });
        return after;
      },
    );

    admin.delete(
      '/models/settings/:id',
      { schema: { ...ADMIN_SCHEMA, summary: 'Take the admin API\'s setting of a model away (a shipped model is as shipped again)', params: IdParams } },
      async (request, reply) => {
        const before = await live.removeModel(request.params.id);
        request.log.info({ model: before.id }, 'admin: model setting removed');
        await recordChange(context.audit, request, { action: 'model.reset', target: { type: 'model', id: before.id }, before });
        return reply.code(204).send();
      },
    );

    admin.get(
      '/models/aliases',
      { schema: { ...ADMIN_SCHEMA, summary: 'Service and legacy aliases with where each comes from', response: { 200: listOf(AliasView) } } },
      async () => ({ object: 'list' as const, data: live.aliases() }),
    );

    admin.put(
      '/models/aliases/:alias',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Point an alias at a model (a service alias: at a chat model)',
          params: AliasParams,
          body: Type.Object(
            {
              target: Type.String({ minLength: 1, maxLength: 200 }),
              kind: Type.Optional(Type.Union([Type.Literal('service'), Type.Literal('legacy')])),
              note: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
            },
            { additionalProperties: false },
          ),
          response: { 200: AliasView },
        },
      },
      async (request) => {
        const { before, after } = await live.putAlias(request.params.alias, request.body, byWhom(request));
        request.log.info({ alias: after.alias, target: after.target }, 'admin: alias set');
        await recordChange(context.audit, request, { action: 'alias.set', target: { type: 'alias', id: after.alias }, before, after });
        return after;
      },
    );

    admin.delete(
      '/models/aliases/:alias',
      { schema: { ...ADMIN_SCHEMA, summary: 'Remove an alias set through the admin API', params: AliasParams } },
      async (request, reply) => {
        const before = await live.removeAlias(request.params.alias);
        request.log.info({ alias: before.alias }, 'admin: alias removed');
        await recordChange(context.audit, request, { action: 'alias.remove', target: { type: 'alias', id: before.alias }, before });
        return reply.code(204).send();
      },
    );

    admin.get(
      '/routing',
      { schema: { ...ADMIN_SCHEMA, summary: 'Routing entries: the config file\'s (read-only) and those set here', response: { 200: listOf(RoutingView) } } },
      async () => ({ object: 'list' as const, data: live.routing() }),
    );

    admin.put(
      '/routing/:model',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Set how a model is routed: a routing entry (deployments, weights, retries, fallbacks, cooldown, timeouts), checked as at start-up',
          params: ModelParams,
          body: Fields,
          response: { 200: RoutingView },
        },
      },
      async (request) => {
        const { before, after } = await live.putRouting(request.params.model, request.body, byWhom(request));
        request.log.info({ model: after.model }, 'admin: routing set');
        await recordChange(context.audit, request, { action: 'routing.set', target: { type: 'routing', id: after.model }, before, after });
        return after;
      },
    );

    admin.delete(
      '/routing/:model',
      { schema: { ...ADMIN_SCHEMA, summary: 'Remove a routing entry set through the admin API', params: ModelParams } },
      async (request, reply) => {
        const before = await live.removeRouting(request.params.model);
        request.log.info({ model: before.model }, 'admin: routing removed');
        await recordChange(context.audit, request, { action: 'routing.remove', target: { type: 'routing', id: before.model }, before });
        return reply.code(204).send();
      },
    );
  });
};
