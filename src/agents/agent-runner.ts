import type { Kysely } from 'kysely';
import type { RequestCall } from '../calls/index.js';
import type { Catalog } from '../catalog/index.js';
import type { GatewayConfig } from '../config/index.js';
import { GatewayError, isGatewayError } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import type { Database } from '../storage/index.js';
import { ownerOf } from './access.js';
import { describeIssues, validateGraph, type GraphEnvironment } from './graph/validate.js';
import type { CompiledGraph } from './graph/types.js';
import type { HostAllowlist } from './http/allowlist.js';
import { AgentMedia, type AssetUrl, type InputAsset } from './media/agent-media.js';
import { checkTurnImages } from './media/ingest.js';
import type { MediaStore } from './media/media-store.js';
import { readTurnInput, type RunInputBody } from './run-input.js';
import { testTrace, toRunResponse, totalCostMicroUsd, totalUsage, type AgentRunResponse } from './run-response.js';
import { executeGraph, RunProgress } from './runtime/execute.js';
import { assertTurnImagesAccepted } from './runtime/preflight.js';
import type { AgentTools, HttpCaller } from './runtime/types.js';
import type { AgentRow } from './store/agent-store.js';
import { AssetRecords } from './store/asset-records.js';
import type { ConversationRow, ConversationStore } from './store/conversation-store.js';
import { newId } from './store/ids.js';
import { RunStore } from './store/run-store.js';
import { parseSafeJson } from './values.js';

/** Earlier messages given to llm nodes with includeHistory. */
const HISTORY_MESSAGES = 50;
/** A run's hold on its conversation outlives its own deadline by this much (then it lapses). */
const LEASE_MARGIN_MS = 60_000;

export interface AgentRunnerDependencies {
  db: Kysely<Database>;
  conversations: ConversationStore;
  catalog: Catalog;
  config: GatewayConfig['agents'];
  mediaStore: MediaStore;
  http: HttpCaller;
  httpAllowlist: HostAllowlist;
  /** The gateway's MCP tools, for llm nodes with `tools`. */
  tools?: AgentTools;
}

/** Which graph runs: a published version, or (authoring test) a draft. */
export interface RunTarget {
  agent: AgentRow;
  graph: string;
  version: number | null;
  draftVersion: number | null;
  test: boolean;
}

export interface RunTurnRequest {
  target: RunTarget;
  principal: Principal;
  body: RunInputBody & { conversation_id?: string };
  requestId: string;
  assetUrl: AssetUrl;
  signal: AbortSignal;
  /** The request's call through the model-call path: the run's model calls are its sub-calls, metered against the caller's key caps. */
  call: Pick<RequestCall, 'subcall' | 'metered' | 'toolCalled' | 'guarded' | 'requestId'>;
}

/** What a run used and made, filled in as it goes: the route logs and meters it even after a failure. */
export class RunTracker {
  readonly progress = new RunProgress();
  inputAssets: InputAsset[] = [];
  runId: string | null = null;
  conversationId: string | null = null;

  get usage() {
    return totalUsage(this.progress.nodes);
  }

  get costMicroUsd(): number | null {
    return totalCostMicroUsd(this.progress.nodes);
  }
}

/**
 * Runs one turn of an agent: checks and archives the turn's media, holds the conversation,
 * executes the graph, stores the turn in the history and the run record.
 */
export class AgentRunner {
  private readonly conversations: ConversationStore;
  private readonly runs: RunStore;
  private readonly assets: AssetRecords;
  readonly environment: GraphEnvironment;

  constructor(private readonly dependencies: AgentRunnerDependencies) {
    this.conversations = dependencies.conversations;
    this.runs = new RunStore(dependencies.db);
    this.assets = new AssetRecords(dependencies.db);
    this.environment = {
      catalog: dependencies.catalog,
      httpAllowlist: dependencies.httpAllowlist,
      maxLoopIterations: dependencies.config.maxLoopIterations,
      maxValueBytes: dependencies.config.maxValueBytes,
    };
  }

  /** Compiles a stored graph; one that no longer validates (the catalog or allowlist changed) cannot run. */
  compile(target: RunTarget): CompiledGraph {
    const result = validateGraph(parseSafeJson(target.graph), this.environment);
    if (!result.ok) {
      throw new GatewayError('invalid_agent_graph', `The agent "${target.agent.slug}" cannot run on this gateway as configured: ${describeIssues(result.issues)}`);
    }
    return result.graph;
  }

  async run(request: RunTurnRequest, tracker: RunTracker): Promise<AgentRunResponse> {
    const { target, principal } = request;
    const graph = this.compile(target);
    const input = readTurnInput(request.body);
    if (input.images.length > 0) assertTurnImagesAccepted(graph, this.dependencies.catalog);
    const checkedImages = await checkTurnImages(input.images);

    const owner = ownerOf(principal);
    const runId = newId('run');
    tracker.runId = runId;
    const scope = { agentId: target.agent.id, owner, test: target.test };
    const leaseMs = this.dependencies.config.runTimeoutMs + LEASE_MARGIN_MS;
    const conversation: ConversationRow =
      request.body.conversation_id === undefined
        ? await this.conversations.create(scope, runId, leaseMs)
        : await this.conversations.acquire(request.body.conversation_id, scope, runId, leaseMs);
    tracker.conversationId = conversation.id;

    try {
      await this.runs.start({
        id: runId,
        agent_id: target.agent.id,
        agent_version: target.version,
        draft_version: target.draftVersion,
        test: target.test ? 1 : 0,
        conversation_id: conversation.id,
        request_id: request.requestId,
        owner,
        started_at: Date.now(),
      });
      const media = new AgentMedia(this.dependencies.mediaStore, this.assets, { agentId: target.agent.id, conversationId: conversation.id, runId, owner }, request.assetUrl);
      const archived = await media.archiveTurn(checkedImages);
      tracker.inputAssets = archived.assets;
      const history = await this.conversations.history(conversation.id, HISTORY_MESSAGES);

      const result = await executeGraph(graph, { text: input.text, images: archived.images }, history, {
        catalog: this.dependencies.catalog,
        call: request.call,
        principal,
        limits: this.dependencies.config,
        media,
        http: this.dependencies.http,
        ...(this.dependencies.tools === undefined ? {} : { tools: this.dependencies.tools }),
        requestId: request.requestId,
        signal: request.signal,
        recordValues: target.test,
      }, tracker.progress);

      await this.conversations.appendTurn(conversation, runId, [
        { role: 'user', text: input.text, assetIds: archived.assets.map((asset) => asset.asset_id) },
        { role: 'assistant', text: result.text, assetIds: result.attachments.map((image) => image.assetId) },
      ]);
      await this.finish(runId, tracker, null);
      const response = toRunResponse(
        { requestId: request.requestId, runId, conversationId: conversation.id, slug: target.agent.slug, version: target.version, draftVersion: target.draftVersion, test: target.test },
        result,
        archived.assets,
      );
      return target.test ? { ...response, trace: testTrace(result.trace, tracker.progress.values, result.nodes) } : response;
    } catch (error) {
      await this.finish(runId, tracker, isGatewayError(error) ? error.code : 'internal_error');
      throw error;
    } finally {
      await this.conversations.release(conversation.id, runId);
    }
  }

  private async finish(runId: string, tracker: RunTracker, errorCode: string | null): Promise<void> {
    const usage = tracker.usage;
    await this.runs.finish(runId, {
      status: errorCode === null ? 'succeeded' : 'failed',
      errorCode,
      promptTokens: usage?.promptTokens ?? null,
      completionTokens: usage?.completionTokens ?? null,
      totalTokens: usage?.totalTokens ?? null,
      costMicroUsd: tracker.costMicroUsd,
      trace: { steps: tracker.progress.trace, models: tracker.progress.nodes, generated: tracker.progress.generated.map((image) => image.assetId) },
    });
  }
}
