import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { RunTracker, withAssetReferences, type AgentRunResponse, type AgentServices, type RunTarget } from '../../agents/index.js';
import type { Principal } from '../../keys/index.js';
import type { GatewayContext } from '../context.js';
import { publicBaseUrl } from '../public-url.js';
import type { AgentRunBody } from './agent-schemas.js';
import { clientGoneSignal } from './model-call.js';

/** Where the gateway serves an asset, under its public base URL. */
export function assetUrlFor(request: FastifyRequest, context: GatewayContext): (assetId: string) => string {
  const base = publicBaseUrl(context.config, request);
  return (assetId) => `${base}/v1/agents/assets/${assetId}`;
}

/**
 * Runs one agent turn for a route (the public run endpoint, or an authoring test) as the
 * request's call: its model calls metered against the key's limits call by call and priced in
 * its record, the media logged as asset ids (never base64), the run id and agent version noted.
 */
export async function runAgentTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  context: GatewayContext,
  services: AgentServices,
  run: { target: RunTarget; principal: Principal; body: Static<typeof AgentRunBody> },
): Promise<AgentRunResponse> {
  const { call } = request;
  const { target, principal, body } = run;
  const agentFacts = { agent: target.agent.slug, agent_version: target.version, draft_version: target.draftVersion, test: target.test };
  call.describe({ mode: 'agent', payload: body, agent: target.agent.slug });
  call.note(agentFacts);
  // The run counts once against the per-minute limit (and is refused when a cap has nothing
  // left); each of its model calls reserves and settles its own usage against the caps as it is made.
  const admission = await call.reserve(principal, { tokens: 0, costUsd: null });
  reply.headers(admission.headers);

  const tracker = new RunTracker();
  try {
    const response = await services.runner.run(
      { target, principal, body, requestId: request.id, assetUrl: assetUrlFor(request, context), signal: clientGoneSignal(reply), call },
      tracker,
    );
    call.answered({ payload: response });
    return response;
  } finally {
    const generated = tracker.progress.generated;
    const inline = tracker.inputAssets.filter((asset) => asset.source === 'inline');
    call.carried({
      images: tracker.inputAssets.length,
      files: 0,
      mimeTypes: [...new Set(inline.map((asset) => asset.mime_type!))],
      bytes: inline.reduce((sum, asset) => sum + (asset.bytes ?? 0), 0),
      assetIds: [...tracker.inputAssets.map((asset) => asset.asset_id), ...generated.map((image) => image.assetId)],
    });
    call.logRequestAs(withAssetReferences(body, tracker.inputAssets));
    call.note({ run_id: tracker.runId, conversation_id: tracker.conversationId, nodes: tracker.progress.nodes.length });
  }
}
