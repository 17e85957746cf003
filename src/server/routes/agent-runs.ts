import { Type } from '@sinclair/typebox';
import { assertAgentAccess, ownerOf } from '../../agents/index.js';
import { GatewayError } from '../../errors/index.js';
import type { RouteModule } from '../app.js';
import { formatBytes } from '../error-mapping.js';
import { AgentRunBody, AgentRunResponse, SlugParams } from './agent-schemas.js';
import { runAgentTurn } from './agent-run-handler.js';
import { ERROR_RESPONSES, MODEL_ROUTE_SCHEMA } from './model-call.js';

/** The JSON body limit of agent runs (docs/agents.md, "Media"): room for 10 MiB of images as base64. */
export const AGENT_BODY_LIMIT_BYTES = 12 * 1024 * 1024;

const SECURITY = MODEL_ROUTE_SCHEMA.security;

/**
 * `POST /v1/agents/{slug}/runs`: one turn of a published agent, never streamed; and
 * `GET /v1/agents/assets/{asset_id}`: the media of a run, for the key that owns it.
 */
export const agentRunsRoutes: RouteModule = (app, context) => {
  const services = context.agents;

  app.post(
    '/v1/agents/:slug/runs',
    {
      bodyLimit: AGENT_BODY_LIMIT_BYTES,
      config: { scope: 'agents:execute' },
      // The app's handler names the server-wide limit; this route's is smaller.
      errorHandler: (error, _request, _reply) => {
        if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
          throw new GatewayError('request_too_large', `The request body is larger than the limit of ${formatBytes(AGENT_BODY_LIMIT_BYTES)} for agent runs. Send smaller or fewer images.`);
        }
        throw error;
      },
      schema: {
        summary: 'Run one turn of a published agent',
        description:
          'Runs the published version of the agent `slug` on the user turn (`input`, `message` or `messages`). Send the returned `conversation_id` to continue the conversation. Needs the `agents:execute` scope and access to the agent\'s project (or a grant). Never streams.',
        tags: ['agents'],
        security: SECURITY,
        params: SlugParams,
        body: AgentRunBody,
        response: { 200: AgentRunResponse, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const { slug } = request.params;
      const agent = await services.agents.findBySlug(slug);
      if (agent === undefined) {
        throw new GatewayError('agent_not_found', `There is no agent "${slug.slice(0, 64)}". Check the slug in the agent's settings.`);
      }
      await assertAgentAccess(agent, request.principal, services.agents);
      if (agent.published_version === null) {
        throw new GatewayError('agent_not_found', `The agent "${slug}" has not been published yet; publish it before running it here.`);
      }
      const version = await services.agents.getVersion(agent, agent.published_version);
      return runAgentTurn(request, reply, context, services, {
        target: { agent, graph: version.graph, version: version.version, draftVersion: version.draft_version, test: false },
        principal: request.principal,
        body: request.body,
      });
    },
  );

  app.get(
    '/v1/agents/assets/:asset_id',
    {
      config: { scope: 'agents:execute' },
      schema: {
        summary: 'Download an image of an agent run',
        description: 'Serves an archived input image or a generated image, to the key (or user) whose conversation it belongs to.',
        tags: ['agents'],
        security: SECURITY,
        params: Type.Object({ asset_id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: Type.Unsafe({ type: 'string', format: 'binary', description: 'the image bytes' }), ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      request.call.describe({ mode: 'agent', payload: null });
      request.call.note({ asset_id: request.params.asset_id });
      const asset = await services.assets.get(request.params.asset_id);
      const data = asset !== undefined && asset.owner === ownerOf(request.principal) && asset.storage_key !== null ? await services.mediaStore.get(asset.storage_key) : null;
      // The same answer for an unknown asset, another key's asset and a URL that was never stored.
      if (asset === undefined || data === null || asset.mime_type === null) {
        throw new GatewayError('not_found', 'There is no stored asset with this id for this API key.', { param: 'asset_id' });
      }
      return reply
        .type(asset.mime_type)
        .header('cache-control', 'private, max-age=3600')
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', 'inline')
        .send(data);
    },
  );
};
