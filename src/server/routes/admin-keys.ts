import { Type, type Static } from '@sinclair/typebox';
import { GatewayError, invalidBody } from '../../errors/index.js';
import { MAX_SPEND_KEYS } from '../../logs/index.js';
import {
  encodeKeyCursor,
  parseKeyCursor,
  PROJECT_ID_PATTERN,
  SCOPES,
  toKeyView,
  toProjectView,
  type ProjectRow,
  type KeyAction,
  type KeyLimits,
  type KeyRow,
  type Scope,
} from '../../keys/index.js';
import { ALLOWED_TOOL_PATTERN } from '../../mcp/index.js';
import type { FastifyRequest } from 'fastify';
import { TEAM_ADMIN_MAY_CALL } from '../admin-auth.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, assertInScope, inScope, projectScopeOf, registerAdminRoutes, scopedProjectIds } from './admin-scope.js';
import { listOf, Nullable } from './schema-helpers.js';

/**
 * The admin API (docs/admin-api.md): projects and keys. Authorised by the admin token or an
 * `admin` session; a `team_admin` session manages the keys of its teams' projects only
 * (admin-scope.ts). Kept out of the public OpenAPI document (`hide`). Every change is put into this instance's
 * key cache at once and announced to the other instances (key-propagation.ts).
 */

// A plain enum (not a union of literals) so a bad value's message lists the allowed scopes.
const ScopeSchema = Type.Unsafe<Scope>({ type: 'string', enum: [...SCOPES] });
const ProjectIdSchema = Type.String({ pattern: PROJECT_ID_PATTERN, description: 'lowercase letters, digits, "_" and "-"' });
const NameSchema = Type.String({ minLength: 1, maxLength: 200 });

// The bounds are what every database column holds (PostgreSQL integer, a double's exact
// integers, PostgreSQL real): a larger value was a 500 there, and no limit needs one.
const LimitsSchema = Type.Object(
  {
    rpm: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'requests per minute' }))),
    daily_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'tokens per UTC day' }))),
    monthly_cost_usd: Type.Optional(
      Nullable(Type.Number({ minimum: 0.000001, maximum: 1_000_000_000, description: 'USD per UTC calendar month (from one micro-dollar to a billion)' })),
    ),
  },
  { additionalProperties: false, description: 'null clears a limit' },
);

/** A tag: what keys are grouped and filtered by (`?tag=`). */
const TAG_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$';
const MAX_KEY_GRACE_SECONDS = 30 * 86_400;

const KeyFields = {
  name: NameSchema,
  scopes: Type.Array(ScopeSchema, { minItems: 1 }),
  limits: LimitsSchema,
  allowed_models: Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 1000 })),
  allowed_tools: Nullable(
    Type.Array(Type.String({ pattern: ALLOWED_TOOL_PATTERN, maxLength: 300, description: 'server__tool, or server__* for every tool of the server' }), {
      minItems: 1,
      maxItems: 1000,
      description: 'MCP tools the key may see and call (docs/mcp.md); null = every tool',
    }),
  ),
  allow_unpriced: Type.Boolean({ description: 'with a monthly cost cap, serve models the gateway cannot price too (uncounted); default false: refused with 400 model_unpriced' }),
  expires_at: Nullable(Type.String({ minLength: 10, maxLength: 40, description: 'ISO 8601 time after which the key is refused (401 key_expired); null = never' })),
  tags: Type.Array(Type.String({ pattern: TAG_PATTERN, description: 'letters, digits and _ . : / -, up to 64' }), { maxItems: 50 }),
  metadata: Type.Unsafe<Record<string, string>>({
    type: 'object',
    propertyNames: { minLength: 1, maxLength: 64 },
    additionalProperties: { type: 'string', maxLength: 500 },
    maxProperties: 50,
    description: 'free fields of the operator: names of 1-64 characters, string values of up to 500',
  }),
};

const CreateKeyBody = Type.Object(
  {
    name: KeyFields.name,
    project: Type.Optional(ProjectIdSchema),
    scopes: KeyFields.scopes,
    limits: Type.Optional(KeyFields.limits),
    allowed_models: Type.Optional(KeyFields.allowed_models),
    allowed_tools: Type.Optional(KeyFields.allowed_tools),
    allow_unpriced: Type.Optional(KeyFields.allow_unpriced),
    expires_at: Type.Optional(KeyFields.expires_at),
    tags: Type.Optional(KeyFields.tags),
    metadata: Type.Optional(KeyFields.metadata),
  },
  { additionalProperties: false },
);

const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(KeyFields.name),
    scopes: Type.Optional(KeyFields.scopes),
    limits: Type.Optional(KeyFields.limits),
    allowed_models: Type.Optional(KeyFields.allowed_models),
    allowed_tools: Type.Optional(KeyFields.allowed_tools),
    allow_unpriced: Type.Optional(KeyFields.allow_unpriced),
    expires_at: Type.Optional(KeyFields.expires_at),
    tags: Type.Optional(KeyFields.tags),
    metadata: Type.Optional(KeyFields.metadata),
  },
  { additionalProperties: false },
);

const RotateKeyBody = Type.Object(
  {
    grace_period_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_KEY_GRACE_SECONDS, description: 'how long the replaced secret keeps working (default 0: it stops at once); at most 30 days' }),
    ),
  },
  { additionalProperties: false },
);

const TeamIdSchema = Type.String({ pattern: PROJECT_ID_PATTERN, description: 'the id of an existing team' });
const CreateProjectBody = Type.Object(
  { id: ProjectIdSchema, name: Type.Optional(NameSchema), allowed_tools: Type.Optional(KeyFields.allowed_tools), team_id: Type.Optional(TeamIdSchema) },
  { additionalProperties: false },
);
const UpdateProjectBody = Type.Object(
  { allowed_tools: Type.Optional(KeyFields.allowed_tools), team_id: Type.Optional({ ...TeamIdSchema, description: 'moves the project (its keys, agents and records) to this team' }) },
  { additionalProperties: false },
);

const KeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  project_id: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('revoked')]),
  scopes: Type.Array(ScopeSchema),
  fingerprint: Type.String(),
  limits: Type.Object({
    rpm: Nullable(Type.Integer()),
    daily_tokens: Nullable(Type.Integer()),
    monthly_cost_usd: Nullable(Type.Number()),
  }),
  allowed_models: Nullable(Type.Array(Type.String())),
  allowed_tools: Nullable(Type.Array(Type.String())),
  allow_unpriced: Type.Boolean(),
  expires_at: Nullable(Type.String()),
  previous_secret_expires_at: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const CreatedKeyView = Type.Composite([KeyView, Type.Object({ secret: Type.String({ description: 'shown once' }) })]);
const GrantedIds = Type.Array(Type.String());
const ProjectView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  team_id: Type.String({ description: 'the team the project belongs to' }),
  allowed_tools: Nullable(Type.Array(Type.String())),
  allow_unpriced: Type.Boolean({ description: 'projects.<id>.allowUnpriced of the config file' }),
  upstream_objects: Type.Object(
    { conversations: GrantedIds, prompts: GrantedIds, items: GrantedIds, vectorStores: GrantedIds, files: GrantedIds, containers: GrantedIds, cachedContents: GrantedIds },
    { description: 'projects.<id>.upstreamObjects of the config file: vendor-account objects its keys may name' },
  ),
  created_at: Type.String(),
});

const KeyIdParams = Type.Object({ id: Type.String() });

const DEFAULT_KEY_PAGE = 50;
const KeyListQuery = Type.Object(
  {
    project: Type.Optional(ProjectIdSchema),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('revoked')])),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'part of the name, or the start of the id' })),
    tag: Type.Optional(Type.String({ pattern: TAG_PATTERN, description: 'only keys with this tag' })),
    limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|[1-4][0-9][0-9]|500)$', description: 'keys per page, 1 to 500' })),
    cursor: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
const KeyListView = Type.Object({ object: Type.Literal('list'), data: Type.Array(KeyView), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) });

type LimitsBody = Static<typeof LimitsSchema>;

/** An `expires_at` of a body: an ISO 8601 time (UTC unless it says otherwise), or null for never. */
function expiryOf(value: string | null | undefined, use: 'create' | 'update', now: number = Date.now()): { expiresAt?: number | null } {
  if (value === undefined) return {};
  if (value === null) return { expiresAt: null };
  const time = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(/[T ]\d{2}:\d{2}/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? `${value}Z` : value) : NaN;
  if (Number.isNaN(time)) throw invalidBody('expires_at must be an ISO 8601 time such as 2027-01-31T00:00:00Z, or null for never.', 'expires_at');
  // A key made expired would be refused from its first call; an update may end a key now.
  if (use === 'create' && time <= now) throw invalidBody('expires_at is in the past: give a later time, or leave it out for a key that does not expire.', 'expires_at');
  return { expiresAt: time };
}

function limitChanges(limits: LimitsBody | undefined): Partial<KeyLimits> {
  if (limits === undefined) return {};
  return {
    ...(limits.rpm !== undefined ? { rpm: limits.rpm } : {}),
    ...(limits.daily_tokens !== undefined ? { dailyTokens: limits.daily_tokens } : {}),
    ...(limits.monthly_cost_usd !== undefined ? { monthlyCostUsd: limits.monthly_cost_usd } : {}),
  };
}

const ACTIONS: readonly (readonly [KeyAction, string])[] = [
  ['pause', 'paused'],
  ['resume', 'resumed'],
  ['revoke', 'revoked'],
];

export const adminKeysRoutes: RouteModule = async (app, context) => {
  const { store, propagation } = context.keys;
  const { projects } = context.keys;
  const noGrants = { conversations: [], prompts: [], items: [], vectorStores: [], files: [], containers: [], cachedContents: [] };
  /** A project with the policy the config file gives it (none when it lists it not). */
  const projectView = (row: ProjectRow) => {
    const policy = context.config.projects[row.id];
    return { ...toProjectView(row), allow_unpriced: policy?.allowUnpriced ?? false, upstream_objects: policy?.upstreamObjects ?? noGrants };
  };
  const { audit } = context;
  const noProject = (id: string) => () => new GatewayError('not_found', `There is no project "${id}". GET /admin/v1/projects lists them.`);

  /** The key behind an id, if the request's scope holds its project; another team's key is answered as unknown. */
  const scopedKey = async (request: FastifyRequest, id: string): Promise<KeyRow> => {
    const row = await store.get(id);
    await assertInScope(request, context, row.project_id, () => new GatewayError('not_found', `There is no key with id "${id}". List keys with GET /admin/v1/keys.`));
    return row;
  };

  /** Applies a changed row on this instance at once, announces it to the others and returns its view. */
  const applied = (row: KeyRow) => {
    propagation.announce(row);
    return toKeyView(row);
  };

  await registerAdminRoutes(app, context, (admin) => {
    admin.post(
      '/keys',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Create a key (the secret is returned once)', body: CreateKeyBody, response: { 201: CreatedKeyView } } },
      async (request, reply) => {
        const { body } = request;
        await assertInScope(request, context, body.project ?? 'default', noProject(body.project ?? 'default'));
        const { row, secret } = await store.create({
          name: body.name,
          projectId: body.project ?? 'default',
          scopes: body.scopes,
          limits: { rpm: null, dailyTokens: null, monthlyCostUsd: null, ...limitChanges(body.limits) },
          allowedModels: body.allowed_models ?? null,
          allowedTools: body.allowed_tools ?? null,
          allowUnpriced: body.allow_unpriced ?? false,
          ...expiryOf(body.expires_at, 'create'),
          ...(body.tags !== undefined ? { tags: body.tags } : {}),
          ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
        });
        request.log.info({ keyId: row.id, projectId: row.project_id }, 'admin: key created');
        const view = applied(row);
        await recordChange(audit, request, { action: 'key.create', target: { type: 'key', id: row.id }, after: view });
        reply.code(201);
        return { ...view, secret };
      },
    );

    admin.get(
      '/keys',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'List keys: all of them, or newest first a page at a time (limit, cursor) with search and state filters',
          querystring: KeyListQuery,
          response: { 200: KeyListView },
        },
      },
      async (request) => {
        const { project, status, q, tag, limit, cursor } = request.query;
        const scope = await projectScopeOf(request, context);
        if (limit === undefined && cursor === undefined && status === undefined && q === undefined && tag === undefined) {
          const rows = (await store.list(project)).filter((row) => inScope(scope, row.project_id));
          return { object: 'list' as const, data: rows.map(toKeyView), has_more: false, next_cursor: null };
        }
        const projectIds = scopedProjectIds(scope);
        const page = await context.keys.page({
          projectId: project,
          ...(projectIds === null ? {} : { projectIds }),
          status,
          search: q,
          tag,
          limit: limit === undefined ? DEFAULT_KEY_PAGE : Number(limit),
          cursor: cursor === undefined ? undefined : parseKeyCursor(cursor),
        });
        return { object: 'list' as const, data: page.rows.map(toKeyView), has_more: page.next !== null, next_cursor: page.next === null ? null : encodeKeyCursor(page.next) };
      },
    );

    admin.get(
      '/keys/spend',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: "Keys' tokens and cost of the current UTC day and month (what their caps count)",
          querystring: Type.Object({ ids: Type.String({ minLength: 1, maxLength: 20_000, description: 'comma-separated key ids' }) }, { additionalProperties: false }),
        },
      },
      async (request) => {
        const ids = [...new Set(request.query.ids.split(',').filter((id) => id.length > 0))];
        if (ids.length > MAX_SPEND_KEYS) throw invalidBody(`ids may name at most ${MAX_SPEND_KEYS} keys; ask for one page of keys at a time.`, 'ids');
        const scope = await projectScopeOf(request, context);
        // Another team's key ids are left out, as unknown ids are.
        const rows = scope.all ? [] : await Promise.all(ids.map((id) => store.find(id)));
        const visible = scope.all ? ids : rows.flatMap((row) => (row !== undefined && inScope(scope, row.project_id) ? [row.id] : []));
        return { object: 'list' as const, data: await context.logs.spendOf(visible) };
      },
    );

    admin.get(
      '/keys/:id',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Show a key', params: KeyIdParams, response: { 200: KeyView } } },
      async (request) => toKeyView(await scopedKey(request, request.params.id)),
    );

    admin.patch(
      '/keys/:id',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: { ...ADMIN_SCHEMA, summary: 'Change a key: name, scopes, limits, allowed models and tools, unpriced models, expiry, tags, metadata', params: KeyIdParams, body: UpdateKeyBody, response: { 200: KeyView } },
      },
      async (request) => {
        const { body } = request;
        if (Object.keys(body).length === 0) {
          throw invalidBody('Send at least one of name, scopes, limits, allowed_models, allowed_tools, allow_unpriced, expires_at, tags, metadata.');
        }
        const before = toKeyView(await scopedKey(request, request.params.id));
        const row = await store.update(request.params.id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.scopes !== undefined ? { scopes: body.scopes } : {}),
          limits: limitChanges(body.limits),
          ...(body.allowed_models !== undefined ? { allowedModels: body.allowed_models } : {}),
          ...(body.allowed_tools !== undefined ? { allowedTools: body.allowed_tools } : {}),
          ...(body.allow_unpriced !== undefined ? { allowUnpriced: body.allow_unpriced } : {}),
          ...expiryOf(body.expires_at, 'update'),
          ...(body.tags !== undefined ? { tags: body.tags } : {}),
          ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
        });
        request.log.info({ keyId: row.id, fields: Object.keys(body) }, 'admin: key updated');
        const after = applied(row);
        await recordChange(audit, request, { action: 'key.update', target: { type: 'key', id: row.id }, before, after });
        return after;
      },
    );

    for (const [action, done] of ACTIONS) {
      admin.post(
        `/keys/:id/${action}`,
        { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: `${action[0]!.toUpperCase()}${action.slice(1)} a key`, params: KeyIdParams, response: { 200: KeyView } } },
        async (request) => {
          const before = toKeyView(await scopedKey(request, request.params.id));
          const row = await store.transition(request.params.id, action);
          request.log.info({ keyId: row.id, status: row.status }, `admin: key ${done}`);
          const after = applied(row);
          await recordChange(audit, request, { action: `key.${action}`, target: { type: 'key', id: row.id }, before, after });
          return after;
        },
      );
    }

    admin.post(
      '/keys/:id/rotate',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Rotate a key: a new secret (returned once) for the same key id and settings; the old one works through the grace period given',
          params: KeyIdParams,
          body: Type.Optional(RotateKeyBody),
          response: { 200: CreatedKeyView },
        },
      },
      async (request) => {
        const before = toKeyView(await scopedKey(request, request.params.id));
        const graceSeconds = request.body?.grace_period_seconds ?? 0;
        const { row, secret } = await store.rotate(request.params.id, graceSeconds * 1000);
        request.log.info({ keyId: row.id, graceSeconds }, 'admin: key rotated');
        const after = applied(row);
        await recordChange(audit, request, { action: 'key.rotate', target: { type: 'key', id: row.id }, before, after: { ...after, grace_period_seconds: graceSeconds } });
        return { ...after, secret };
      },
    );

    for (const action of ['pause', 'resume', 'revoke'] as const) {
      admin.post(
        `/projects/:id/keys/${action}`,
        {
          config: TEAM_ADMIN_MAY_CALL,
          schema: {
            ...ADMIN_SCHEMA,
            summary: `${action[0]!.toUpperCase()}${action.slice(1)} every key of a project that can be (one action, one audit entry)`,
            params: Type.Object({ id: ProjectIdSchema }),
            response: { 200: KeyListView },
          },
        },
        async (request) => {
          const project = await projects.find(request.params.id);
          if (project === undefined) throw noProject(request.params.id)();
          await assertInScope(request, context, project.id, noProject(project.id));
          const changed = await store.transitionProject(project.id, action);
          const views = changed.map(({ after }) => applied(after));
          request.log.info({ projectId: project.id, keys: views.length }, `admin: project keys ${action === 'revoke' ? 'revoked' : `${action}d`}`);
          await recordChange(audit, request, {
            action: `project.${action}_keys`,
            target: { type: 'project', id: project.id },
            before: { keys: changed.map(({ before }) => ({ id: before.id, status: before.status })) },
            after: { keys: views.map((view) => ({ id: view.id, status: view.status })) },
          });
          return { object: 'list' as const, data: views, has_more: false, next_cursor: null };
        },
      );
    }

    admin.get(
      '/projects',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: "List projects (a team admin's: its teams' projects)", response: { 200: listOf(ProjectView) } } },
      async (request) => {
        const scope = await projectScopeOf(request, context);
        return { object: 'list' as const, data: (await projects.list()).filter((row) => inScope(scope, row.id)).map(projectView) };
      },
    );

    admin.post(
      '/projects',
      { schema: { ...ADMIN_SCHEMA, summary: 'Create a project (in the default team unless team_id names another)', body: CreateProjectBody, response: { 201: ProjectView } } },
      async (request, reply) => {
        const { body } = request;
        const created = await projects.create(body.id, body.name, body.team_id);
        const row = body.allowed_tools === undefined ? created : await projects.setAllowedTools(created.id, body.allowed_tools);
        context.mcp.projectChanged(row.id, body.allowed_tools ?? null);
        request.log.info({ projectId: row.id, teamId: row.team_id }, 'admin: project created');
        const view = toProjectView(row);
        await recordChange(audit, request, { action: 'project.create', target: { type: 'project', id: row.id }, after: view });
        reply.code(201);
        return projectView(row);
      },
    );

    admin.patch(
      '/projects/:id',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: "Change a project: its allowed MCP tools, or its team (a move)",
          params: Type.Object({ id: ProjectIdSchema }),
          body: UpdateProjectBody,
          response: { 200: ProjectView },
        },
      },
      async (request) => {
        const { body } = request;
        if (body.allowed_tools === undefined && body.team_id === undefined) throw invalidBody('Send at least one of allowed_tools, team_id.');
        const before = await projects.find(request.params.id);
        if (before === undefined) throw noProject(request.params.id)();
        if (body.team_id !== undefined) await context.keys.teams.get(body.team_id, 'team_id');
        let row = before;
        if (body.team_id !== undefined && body.team_id !== before.team_id) row = await projects.setTeam(before.id, body.team_id);
        if (body.allowed_tools !== undefined) {
          row = await projects.setAllowedTools(before.id, body.allowed_tools);
          context.mcp.projectChanged(row.id, body.allowed_tools);
        }
        request.log.info({ projectId: row.id, fields: Object.keys(body) }, 'admin: project updated');
        const moved = before.team_id !== row.team_id;
        await recordChange(audit, request, {
          action: moved && body.allowed_tools === undefined ? 'project.move' : 'project.update',
          target: { type: 'project', id: row.id },
          before: toProjectView(before),
          after: toProjectView(row),
        });
        return projectView(row);
      },
    );
  });
};
