import { Type } from '@sinclair/typebox';
import { agentGraphSchema, assertAgentAccess, ownerOf, parseSafeJson, SLUG_PATTERN, type AgentRow } from '../../agents/index.js';
import { GatewayError, isGatewayError } from '../../errors/index.js';
import { PROJECT_ID_PATTERN, type Principal } from '../../keys/index.js';
import type { FastifyRequest } from 'fastify';
import { TEAM_ADMIN_MAY_CALL } from '../admin-auth.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, assertInScope, inScope, projectScopeOf, registerAdminRoutes } from './admin-scope.js';
import { AgentRunResponse, RunInputFields } from './agent-schemas.js';
import { runAgentTurn } from './agent-run-handler.js';
import { listOf, Nullable } from './schema-helpers.js';

/**
 * The agent authoring API (docs/agents.md, "Authoring"): validate, save
 * (numbered drafts), test (runs a draft, metered and logged against a chosen key, marked as a
 * test), publish (immutable versions), list, and grants. Admin token only; hidden from the
 * public OpenAPI document.
 */

const SlugParams = Type.Object({ slug: Type.String({ pattern: SLUG_PATTERN, description: 'lowercase letters, digits, "_" and "-"' }) });
const GraphField = Type.Unknown({ description: 'the agent graph (version 1)' });

const AgentView = Type.Object({
  slug: Type.String(),
  project_id: Type.String(),
  name: Type.String(),
  latest_draft: Type.Integer(),
  published_version: Nullable(Type.Integer()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** A test run: the run response plus each step's values (authoring only). */
const TestRunResponse = Type.Composite([
  AgentRunResponse,
  Type.Object({
    trace: Type.Optional(Type.Array(
      Type.Object({
        node: Type.String(),
        type: Type.String(),
        duration_ms: Type.Integer(),
        branch: Nullable(Type.String()),
        model: Nullable(Type.String()),
        status: Nullable(Type.Integer()),
        asset_ids: Type.Array(Type.String()),
        input: Type.Unknown(),
        output: Type.Unknown(),
        usage: Nullable(Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() })),
        cost_usd: Nullable(Type.Number()),
      }),
    )),
  }),
]);

/** Messages of one conversation the dashboard shows. */
const CONVERSATION_MESSAGES = 500;

const IssueView = Type.Object({ node: Nullable(Type.String()), field: Type.String(), message: Type.String() });

function agentView(row: AgentRow) {
  return {
    slug: row.slug,
    project_id: row.project_id,
    name: row.name,
    latest_draft: row.latest_draft,
    published_version: row.published_version,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export const adminAgentsRoutes: RouteModule = async (app, context) => {
  const services = context.agents;
  const { agents, authoring } = services;

  /**
   * The key a test run is metered and logged against, named by its secret (`key`) or, for the
   * dashboard, which never holds secrets, by its id (`key_id`); its problems are the request's,
   * not the admin token's.
   */
  const testPrincipal = async (secret: string | undefined, keyId: string | undefined): Promise<Principal> => {
    if ((secret === undefined) === (keyId === undefined)) throw new GatewayError('invalid_body', 'Send exactly one of key (a secret) or key_id.', { param: 'key' });
    if (keyId !== undefined) return context.keys.authenticator.authenticateKeyId(keyId, 'agents:execute');
    try {
      return await context.keys.authenticator.authenticate({ authorization: `Bearer ${secret!}` }, 'agents:execute');
    } catch (error) {
      // An unknown key is the body's mistake (a 401 here would read as a refused admin token); a
      // paused, revoked or out-of-scope key gets the 403 the run API gives it.
      if (isGatewayError(error) && error.status === 401) throw new GatewayError('invalid_body', `key: ${error.message}`, { param: 'key' });
      throw error;
    }
  };

  const agentNotFound = (slug: string) => () => new GatewayError('agent_not_found', `There is no agent "${slug}". List agents with GET /admin/v1/agents.`);
  /** The agent of a slug, if the request's scope holds its project; another team's agent is answered as unknown. */
  const scopedAgent = async (request: FastifyRequest, slug: string): Promise<AgentRow> => {
    const agent = await agents.getBySlug(slug);
    await assertInScope(request, context, agent.project_id, agentNotFound(slug));
    return agent;
  };
  /** A key named in a body or query, if the request's scope holds its project. */
  const scopedKeyId = async (request: FastifyRequest, keyId: string): Promise<string> => {
    const key = await context.keys.store.find(keyId);
    const problem = () => new GatewayError('not_found', `There is no key with id "${keyId}". List keys with GET /admin/v1/keys.`, { param: 'key_id' });
    if (key === undefined) throw problem();
    await assertInScope(request, context, key.project_id, problem);
    return key.id;
  };

  await registerAdminRoutes(app, context, (admin) => {
    admin.post(
      '/agents/validate',
      {
        config: { ...TEAM_ADMIN_MAY_CALL, auditExempt: 'validates a graph it is sent; changes nothing' },
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Validate an agent graph: every problem at once',
          body: Type.Object({ graph: GraphField }, { additionalProperties: false }),
          response: { 200: Type.Object({ valid: Type.Boolean(), issues: Type.Array(IssueView) }) },
        },
      },
      async (request) => {
        const result = authoring.validate(request.body.graph);
        return { valid: result.ok, issues: result.ok ? [] : result.issues };
      },
    );

    admin.get(
      '/agent-schema',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'The node types of graph version 1 and their settings, as the validator reads them', response: { 200: Type.Unknown() } } },
      async () => agentGraphSchema(context.config.agents.maxLoopIterations),
    );

    admin.get(
      '/agent-assets/:asset_id',
      {
        schema: {
          ...ADMIN_SCHEMA,
          summary: "An image of an agent run (any key's), for the dashboard's test panel",
          params: Type.Object({ asset_id: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: { 200: Type.Unsafe({ type: 'string', format: 'binary' }) },
        },
      },
      async (request, reply) => {
        const asset = await services.assets.get(request.params.asset_id);
        const data = asset?.storage_key != null && asset.mime_type !== null ? await services.mediaStore.get(asset.storage_key) : null;
        if (asset === undefined || data === null || asset.mime_type === null) throw new GatewayError('not_found', `There is no stored asset "${request.params.asset_id}".`, { param: 'asset_id' });
        return reply.type(asset.mime_type).header('x-content-type-options', 'nosniff').header('content-disposition', 'inline').send(data);
      },
    );

    admin.get(
      '/agents/:slug/drafts/:version',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Show one saved draft',
          params: Type.Composite([SlugParams, Type.Object({ version: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'the draft number' }) })]),
          response: { 200: Type.Object({ version: Type.Integer(), graph: Type.Unknown(), created_at: Type.String() }) },
        },
      },
      async (request) => {
        const agent = await scopedAgent(request, request.params.slug);
        const draft = await agents.getDraft(agent, Number(request.params.version));
        return { version: draft.version, graph: parseSafeJson(draft.graph), created_at: new Date(draft.created_at).toISOString() };
      },
    );

    admin.get(
      '/agents',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'List agents', response: { 200: listOf(AgentView) } } },
      async (request) => {
        const scope = await projectScopeOf(request, context);
        return { object: 'list' as const, data: (await agents.list()).filter((agent) => inScope(scope, agent.project_id)).map(agentView) };
      },
    );

    admin.get(
      '/agents/:slug',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Show an agent: its newest draft and published versions',
          params: SlugParams,
          response: {
            200: Type.Composite([
              AgentView,
              Type.Object({
                draft: Type.Object({ version: Type.Integer(), graph: Type.Unknown() }),
                versions: Type.Array(Type.Object({ version: Type.Integer(), draft_version: Type.Integer(), published_at: Type.String() })),
              }),
            ]),
          },
        },
      },
      async (request) => {
        const agent = await scopedAgent(request, request.params.slug);
        const draft = await agents.getDraft(agent);
        const versions = await agents.listVersions(agent);
        return {
          ...agentView(agent),
          draft: { version: draft.version, graph: parseSafeJson(draft.graph) },
          versions: versions.map((version) => ({ version: version.version, draft_version: version.draft_version, published_at: new Date(version.published_at).toISOString() })),
        };
      },
    );

    admin.put(
      '/agents/:slug',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Save a draft (creates the agent on its first save)',
          params: SlugParams,
          body: Type.Object({ graph: GraphField, project: Type.Optional(Type.String({ pattern: PROJECT_ID_PATTERN })) }, { additionalProperties: false }),
          response: { 200: Type.Composite([AgentView, Type.Object({ draft_version: Type.Integer() })]) },
        },
      },
      async (request) => {
        const before = await agents.findBySlug(request.params.slug);
        const projectId = before?.project_id ?? request.body.project ?? 'default';
        await assertInScope(request, context, projectId, before === undefined ? () => new GatewayError('invalid_body', `There is no project "${projectId}"; create it first.`, { param: 'project' }) : agentNotFound(request.params.slug));
        const { agent, draft } = await authoring.save(request.params.slug, request.body.graph, request.body.project);
        request.log.info({ agent: agent.slug, draft }, 'admin: agent draft saved');
        await recordChange(context.audit, request, {
          action: before === undefined ? 'agent.create' : 'agent.save_draft',
          target: { type: 'agent', id: agent.slug },
          before: before === undefined ? null : agentView(before),
          after: { ...agentView(agent), draft_version: draft },
        });
        return { ...agentView(agent), draft_version: draft };
      },
    );

    admin.post(
      '/agents/:slug/test',
      {
        config: { ...TEAM_ADMIN_MAY_CALL, auditExempt: 'a test run: model calls of a key, in the request log; changes no setting' },
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Run a draft as a test, metered and logged against a key',
          params: SlugParams,
          body: Type.Object(
            {
              key: Type.Optional(Type.String({ minLength: 1, description: 'secret of the key the test is metered and logged against' })),
              key_id: Type.Optional(Type.String({ minLength: 1, description: 'or the id of that key' })),
              draft_version: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the newest draft' })),
              ...RunInputFields,
            },
            { additionalProperties: false },
          ),
          response: { 200: TestRunResponse },
        },
      },
      async (request, reply) => {
        const { key, key_id: keyId, draft_version: draftVersion, ...body } = request.body;
        const agent = await scopedAgent(request, request.params.slug);
        const principal = await testPrincipal(key, keyId === undefined ? undefined : await scopedKeyId(request, keyId));
        await assertAgentAccess(agent, principal, agents);
        const draft = await agents.getDraft(agent, draftVersion ?? agent.latest_draft);
        // The test is the key's request: the request log and the limits attribute it to the key.
        request.principal = principal;
        request.call = context.calls.begin({ requestId: request.id, endpoint: request.routeOptions.url ?? request.url, platform: null, startedAt: Date.now() });
        return runAgentTurn(request, reply, context, services, {
          target: { agent, graph: draft.graph, version: null, draftVersion: draft.version, test: true },
          principal,
          body,
        });
      },
    );

    admin.post(
      '/agents/:slug/publish',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Publish a draft as a new immutable version',
          params: SlugParams,
          body: Type.Object({ draft_version: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the newest draft' })) }, { additionalProperties: false }),
          response: { 200: Type.Composite([AgentView, Type.Object({ version: Type.Integer(), draft_version: Type.Integer() })]) },
        },
      },
      async (request) => {
        await scopedAgent(request, request.params.slug);
        const { agent, version } = await authoring.publish(request.params.slug, request.body.draft_version);
        request.log.info({ agent: agent.slug, version: version.version, draft: version.draft_version }, 'admin: agent published');
        const after = { ...agentView({ ...agent, published_version: version.version }), version: version.version, draft_version: version.draft_version };
        await recordChange(context.audit, request, { action: 'agent.publish', target: { type: 'agent', id: agent.slug }, before: agentView(agent), after });
        return after;
      },
    );

    /**
     * Conversations of the published agent as one key sees them through the API: the key must
     * be usable and reach the agent, and only its own conversations exist for it.
     */
    const conversationScope = async (request: FastifyRequest, slug: string, keyId: string) => {
      const agent = await scopedAgent(request, slug);
      const principal = context.keys.authenticator.authenticateKeyId(await scopedKeyId(request, keyId), 'agents:execute');
      await assertAgentAccess(agent, principal, agents);
      return { agentId: agent.id, owner: ownerOf(principal), test: false };
    };
    const KeyQuery = Type.Object({ key_id: Type.String({ minLength: 1, description: 'the key whose conversations to show' }) }, { additionalProperties: false });
    const ConversationView = Type.Object({ id: Type.String(), message_count: Type.Integer(), created_at: Type.String(), updated_at: Type.String() });

    admin.get(
      '/agents/:slug/conversations',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: "A key's conversations with the published agent, newest first (at most 100)",
          params: SlugParams,
          querystring: KeyQuery,
          response: { 200: listOf(ConversationView) },
        },
      },
      async (request) => {
        const rows = await services.conversations.list(await conversationScope(request, request.params.slug, request.query.key_id), 100);
        return {
          object: 'list' as const,
          data: rows.map((row) => ({ id: row.id, message_count: row.message_count, created_at: new Date(row.created_at).toISOString(), updated_at: new Date(row.updated_at).toISOString() })),
        };
      },
    );

    admin.get(
      '/agents/:slug/conversations/:conversation_id',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: "One of a key's conversations with the published agent: its messages, oldest first (the newest 500)",
          params: Type.Composite([SlugParams, Type.Object({ conversation_id: Type.String({ minLength: 1, maxLength: 100 }) })]),
          querystring: KeyQuery,
          response: {
            200: Type.Object({
              id: Type.String(),
              messages: Type.Array(Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), text: Type.String(), asset_ids: Type.Array(Type.String()) })),
            }),
          },
        },
      },
      async (request) => {
        const scope = await conversationScope(request, request.params.slug, request.query.key_id);
        const conversation = await services.conversations.getBound(request.params.conversation_id, scope);
        const messages = await services.conversations.history(conversation.id, CONVERSATION_MESSAGES);
        return { id: conversation.id, messages: messages.map((message) => ({ role: message.role, text: message.text, asset_ids: message.assetIds })) };
      },
    );

    const GrantView = Type.Object({ key_id: Type.String(), created_at: Type.String() });

    admin.get(
      '/agents/:slug/grants',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: "List the keys of other projects that may run the agent", params: SlugParams, response: { 200: listOf(GrantView) } } },
      async (request) => {
        const agent = await scopedAgent(request, request.params.slug);
        const grants = await agents.listGrants(agent);
        return { object: 'list' as const, data: grants.map((grant) => ({ key_id: grant.key_id, created_at: new Date(grant.created_at).toISOString() })) };
      },
    );

    admin.post(
      '/agents/:slug/grants',
      {
        config: TEAM_ADMIN_MAY_CALL,
        schema: {
          ...ADMIN_SCHEMA,
          summary: 'Let a key of another project run the agent',
          params: SlugParams,
          body: Type.Object({ key_id: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
          response: { 201: GrantView },
        },
      },
      async (request, reply) => {
        const agent = await scopedAgent(request, request.params.slug);
        const key = await context.keys.store.get(await scopedKeyId(request, request.body.key_id));
        await agents.addGrant(agent, key.id);
        request.log.info({ agent: agent.slug, keyId: key.id }, 'admin: agent grant added');
        await recordChange(context.audit, request, { action: 'agent.grant', target: { type: 'agent', id: agent.slug }, after: { key_id: key.id } });
        reply.code(201);
        return { key_id: key.id, created_at: new Date().toISOString() };
      },
    );

    admin.delete(
      '/agents/:slug/grants/:key_id',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Withdraw a grant', params: Type.Composite([SlugParams, Type.Object({ key_id: Type.String() })]), response: { 204: Type.Null() } } },
      async (request, reply) => {
        const agent = await scopedAgent(request, request.params.slug);
        if (!(await agents.removeGrant(agent, request.params.key_id))) {
          throw new GatewayError('not_found', `The key ${request.params.key_id} has no grant on the agent "${agent.slug}".`);
        }
        request.log.info({ agent: agent.slug, keyId: request.params.key_id }, 'admin: agent grant removed');
        await recordChange(context.audit, request, { action: 'agent.revoke_grant', target: { type: 'agent', id: agent.slug }, before: { key_id: request.params.key_id } });
        return reply.code(204).send(null);
      },
    );
  });
};
