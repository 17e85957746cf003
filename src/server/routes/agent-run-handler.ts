import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { RunTracker, withAssetReferences, type AgentRunResponse, type AgentServices, type RunTarget } from '../../agents/index.js';
import type { Principal } from '../../keys/index.js';
import { callMeter } from '../../limits/index.js';
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
 * Runs one agent turn for a route (the public run endpoint, or an authoring test) and fills
 * the request record: metered against the key's limits call by call, logged with usage, cost, the media
 * as asset ids (never base64), and the run id and agent version in `extra`.
 */
export async function runAgentTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  context: GatewayContext,
  services: AgentServices,
  run: { target: RunTarget; principal: Principal; body: Static<typeof AgentRunBody> },
): Promise<AgentRunResponse> {
  const { record } = request;
  const { target, principal, body } = run;
  const agentFacts = { agent: target.agent.slug, agent_version: target.version, draft_version: target.draftVersion, test: target.test };
  record.mode = 'agent';
  record.requestPayload = body;
  record.agent = target.agent.slug;
  record.extra = agentFacts;
  // The run counts once against the per-minute limit (and is refused when a cap has nothing
  // left); each of its model calls reserves and settles its own usage against the caps
  // (callMeter), so the request log settles nothing: the admission is not kept in the record.
  const admission = await context.calls.reserve(principal, { tokens: 0, costUsd: null });
  reply.headers(admission.headers);

  const tracker = new RunTracker();
  try {
    const response = await services.runner.run(
      { target, principal, body, requestId: request.id, assetUrl: assetUrlFor(request, context), signal: clientGoneSignal(reply), meter: callMeter(context.limits, principal) },
      tracker,
    );
    record.responsePayload = response;
    return response;
  } finally {
    const usage = tracker.usage;
    const cost = tracker.costMicroUsd;
    const generated = tracker.progress.generated;
    const inline = tracker.inputAssets.filter((asset) => asset.source === 'inline');
    record.usage = usage;
    record.imageCount = generated.length > 0 ? generated.length : null;
    record.media = {
      images: tracker.inputAssets.length,
      files: 0,
      mimeTypes: [...new Set(inline.map((asset) => asset.mime_type!))],
      bytes: inline.reduce((sum, asset) => sum + (asset.bytes ?? 0), 0),
      assetIds: [...tracker.inputAssets.map((asset) => asset.asset_id), ...generated.map((image) => image.assetId)],
    };
    record.requestPayload = withAssetReferences(body, tracker.inputAssets);
    record.extra = { ...agentFacts, run_id: tracker.runId, conversation_id: tracker.conversationId, nodes: tracker.progress.nodes.length };
    // A run spans several models: its cost is the sum of its nodes, which the log hook uses (and settles limits with) as it is.
    record.costMicroUsd = cost;
  }
}
