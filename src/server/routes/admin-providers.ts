import { Type } from '@sinclair/typebox';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, registerAdminRoutes } from './admin-scope.js';
import { listOf, Nullable } from './schema-helpers.js';

const Settings = Type.Record(Type.String(), Type.Unknown());

const ProviderView = Type.Object({
  name: Type.String(),
  kind: Type.String(),
  source: Type.Union([Type.Literal('env'), Type.Literal('config'), Type.Literal('stored')]),
  origin: Type.String({ description: 'where it comes from: environment: VARIABLE, config file: providers.NAME, admin API' }),
  read_only: Type.Boolean(),
  settings: Settings,
  credentials: Type.Array(Type.Object({ field: Type.String(), fingerprint: Type.String() }), { description: 'the secret fields that are set; the secrets are never shown again' }),
  state: Type.Union([Type.Literal('callable'), Type.Literal('unconfigured'), Type.Literal('shadowed')]),
  description: Nullable(Type.String()),
  created_at: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
});

const KindView = Type.Object({
  kind: Type.String(),
  settings_schema: Settings,
  secret_fields: Type.Array(Type.String()),
  environment: Type.Array(Type.Object({ field: Type.String(), variables: Type.Array(Type.String()) })),
});

const TestView = Type.Object({
  ok: Type.Boolean(),
  model: Nullable(Type.String()),
  latency_ms: Type.Integer(),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
});

const NameParams = Type.Object({ name: Type.String({ maxLength: 64 }) });

/** The admin API of providers and their credentials (docs/admin-api.md#providers): listed with their source, managed live, tested. */
export const adminProvidersRoutes: RouteModule = async (app, context) => {
  const instances = context.providerInstances;
  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/providers/kinds',
      { schema: { ...ADMIN_SCHEMA, summary: 'The kinds of provider and the schema of each one\'s settings', response: { 200: listOf(KindView) } } },
      async () => ({ object: 'list' as const, data: instances.kinds() }),
    );

    admin.get(
      '/providers',
      { schema: { ...ADMIN_SCHEMA, summary: 'Providers: those of the environment and the config file (read-only) and those added here', response: { 200: listOf(ProviderView) } } },
      async () => ({ object: 'list' as const, data: await instances.list() }),
    );

    admin.post(
      '/providers',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Add a provider instance of a kind, its settings as providers.<kind> takes them (secrets included, never shown again)',
          body: Type.Object({ name: Type.String({ maxLength: 64 }), kind: Type.String({ maxLength: 64 }), settings: Settings }, { additionalProperties: false }),
          response: { 201: ProviderView },
        },
      },
      async (request, reply) => {
        const after = await instances.create(request.body);
        request.log.info({ provider: after.name, kind: after.kind }, 'admin: provider added');
        await recordChange(context.audit, request, { action: 'provider.create', target: { type: 'provider', id: after.name }, before: null, after });
        reply.code(201);
        return after;
      },
    );

    admin.patch(
      '/providers/:name',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Change a provider added here: the settings given replace theirs, null removes one, a secret left out is kept',
          params: NameParams,
          body: Type.Object({ settings: Settings }, { additionalProperties: false }),
          response: { 200: ProviderView },
        },
      },
      async (request) => {
        const { before, after } = await instances.update(request.params.name, request.body.settings);
        request.log.info({ provider: after.name }, 'admin: provider changed');
        await recordChange(context.audit, request, { action: 'provider.update', target: { type: 'provider', id: after.name }, before, after });
        return after;
      },
    );

    admin.delete(
      '/providers/:name',
      { schema: { ...ADMIN_SCHEMA, summary: 'Remove a provider added here', params: NameParams } },
      async (request, reply) => {
        const before = await instances.remove(request.params.name);
        request.log.info({ provider: before.name }, 'admin: provider removed');
        await recordChange(context.audit, request, { action: 'provider.remove', target: { type: 'provider', id: before.name }, before });
        return reply.code(204).send();
      },
    );

    admin.post(
      '/providers/:name/test',
      {
        config: { auditExempt: 'sends one tiny model request and changes nothing; the request log does not keep it' },
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Send one tiny request through the provider now: a one-token chat (or an embedding), answering ok, latency and the error',
          params: NameParams,
          body: Type.Optional(Type.Object({ model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the upstream model to call; default: the first chat model of the catalog it serves' })) }, { additionalProperties: false })),
          response: { 200: TestView },
        },
      },
      async (request) => {
        const view = await instances.test(request.params.name, request.id, request.body?.model);
        if (!view.ok) request.log.info({ provider: request.params.name, code: view.error?.code }, 'admin: provider test failed');
        return view;
      },
    );
  });
};
