import { microToUsd } from '../limits/index.js';
import type { TokenUsage } from '../model-api/index.js';
import type { InputAsset } from './media/agent-media.js';
import type { NodeUsage, RunResult, StepValues, TraceStep } from './runtime/types.js';
import type { SafeValue } from './values.js';

/** The agent run response (docs/agents.md, "Running an agent"). */
export interface AgentRunResponse {
  object: 'agent.run';
  request_id: string;
  run_id: string;
  conversation_id: string;
  agent: { slug: string; version: number | null; draft_version: number | null };
  test: boolean;
  output: { text: string; attachments: { type: 'image'; url: string; asset_id: string; mime_type: string | null }[] };
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    nodes: { node: string; type: 'llm' | 'image'; model: string; prompt_tokens: number | null; completion_tokens: number | null; total_tokens: number | null; images: number | null }[];
  };
  cost: { total_usd: number | null; nodes: { node: string; model: string; cost_usd: number | null }[] };
  input_assets: InputAsset[];
  /** Authoring tests only: each step the run took. */
  trace?: TestTraceStep[];
}

/** One step of a test run: what the node read and made, its model, usage, cost and time. */
export interface TestTraceStep {
  node: string;
  type: string;
  duration_ms: number;
  branch: string | null;
  model: string | null;
  status: number | null;
  asset_ids: string[];
  input: SafeValue;
  output: SafeValue;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  cost_usd: number | null;
}

/** The steps of a run with their values (recorded for tests) and the usage of their model calls, in order. */
export function testTrace(steps: readonly TraceStep[], values: readonly StepValues[], nodes: readonly NodeUsage[]): TestTraceStep[] {
  const calls = [...nodes];
  return steps.map((step, index) => {
    const call = step.model === undefined ? undefined : calls.find((entry) => entry.node === step.node);
    if (call !== undefined) calls.splice(calls.indexOf(call), 1);
    return {
      node: step.node,
      type: step.type,
      duration_ms: step.durationMs,
      branch: step.branch ?? null,
      model: step.model ?? null,
      status: step.status ?? null,
      asset_ids: step.assetIds ?? [],
      input: values[index]?.input ?? null,
      output: values[index]?.output ?? null,
      usage: call?.usage == null ? null : { prompt_tokens: call.usage.promptTokens, completion_tokens: call.usage.completionTokens, total_tokens: call.usage.totalTokens },
      cost_usd: call?.costMicroUsd == null ? null : microToUsd(call.costMicroUsd),
    };
  });
}

/** Token totals over the nodes that reported usage; null when none did. */
export function totalUsage(nodes: readonly NodeUsage[]): TokenUsage | null {
  const reported = nodes.flatMap((node) => (node.usage === null ? [] : [node.usage]));
  if (reported.length === 0) return null;
  const sum = (pick: (usage: TokenUsage) => number) => reported.reduce((total, usage) => total + pick(usage), 0);
  const cached = reported.some((usage) => usage.cachedPromptTokens !== null) ? sum((usage) => usage.cachedPromptTokens ?? 0) : null;
  return { promptTokens: sum((usage) => usage.promptTokens), completionTokens: sum((usage) => usage.completionTokens), totalTokens: sum((usage) => usage.totalTokens), cachedPromptTokens: cached };
}

/** The run's cost in micro-USD: null as soon as one model call could not be priced. */
export function totalCostMicroUsd(nodes: readonly NodeUsage[]): number | null {
  let total = 0;
  for (const node of nodes) {
    if (node.costMicroUsd === null) return null;
    total += node.costMicroUsd;
  }
  return total;
}

export interface RunIdentity {
  requestId: string;
  runId: string;
  conversationId: string;
  slug: string;
  version: number | null;
  draftVersion: number | null;
  test: boolean;
}

export function toRunResponse(identity: RunIdentity, result: RunResult, inputAssets: InputAsset[]): AgentRunResponse {
  const usage = totalUsage(result.nodes);
  const cost = totalCostMicroUsd(result.nodes);
  return {
    object: 'agent.run',
    request_id: identity.requestId,
    run_id: identity.runId,
    conversation_id: identity.conversationId,
    agent: { slug: identity.slug, version: identity.version, draft_version: identity.draftVersion },
    test: identity.test,
    output: {
      text: result.text,
      attachments: result.attachments.map((image) => ({ type: 'image', url: image.url, asset_id: image.assetId, mime_type: image.mimeType })),
    },
    usage: {
      prompt_tokens: usage?.promptTokens ?? 0,
      completion_tokens: usage?.completionTokens ?? 0,
      total_tokens: usage?.totalTokens ?? 0,
      nodes: result.nodes.map((node) => ({
        node: node.node,
        type: node.type,
        model: node.model,
        prompt_tokens: node.usage?.promptTokens ?? null,
        completion_tokens: node.usage?.completionTokens ?? null,
        total_tokens: node.usage?.totalTokens ?? null,
        images: node.images,
      })),
    },
    cost: {
      total_usd: cost === null ? null : microToUsd(cost),
      nodes: result.nodes.map((node) => ({ node: node.node, model: node.model, cost_usd: node.costMicroUsd === null ? null : microToUsd(node.costMicroUsd) })),
    },
    input_assets: inputAssets,
  };
}
