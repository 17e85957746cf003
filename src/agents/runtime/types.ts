import type { RequestCall } from '../../calls/index.js';
import type { Catalog } from '../../catalog/index.js';
import type { Principal } from '../../keys/index.js';
import type { McpGateway } from '../../mcp/index.js';
import type { TokenUsage } from '../../model-api/index.js';
import type { SafeValue } from '../values.js';

/** The run budgets of config.agents. */
export interface RunLimits {
  maxNodeExecutions: number;
  maxLoopIterations: number;
  maxModelCalls: number;
  maxValueBytes: number;
  runTimeoutMs: number;
}

/** An image of the current turn, already validated and archived. */
export type TurnImage =
  | { kind: 'inline'; assetId: string; mimeType: string; data: Buffer }
  | { kind: 'url'; assetId: string; url: string };

/** The latest end-user turn. */
export interface Turn {
  text: string;
  images: TurnImage[];
}

/** A prior message of the conversation; media by asset id. */
export interface HistoryMessage {
  role: 'user' | 'assistant';
  text: string;
  assetIds: string[];
}

/**
 * Prior media as the media store gives it back for a model request; `over_budget` when its
 * recorded size is over what the request may still take (then it is not read at all).
 */
export type StoredMedia = { kind: 'inline'; mimeType: string; data: Buffer } | { kind: 'url'; url: string } | { kind: 'over_budget' };

/** A generated image once archived. */
export interface GeneratedImage {
  assetId: string;
  url: string;
  mimeType: string | null;
}

/** What the runtime needs from media storage (implemented over the media store and asset records). */
export interface RunMedia {
  /** Prior media by asset id, read only if it is at most `maxBytes`; null when the stored object is missing. */
  load(assetId: string, maxBytes: number): Promise<StoredMedia | null>;
  /** Archives an image a model generated (bytes, or a provider URL kept as provenance). */
  storeGenerated(image: { data: Buffer } | { url: string }, nodeId: string): Promise<GeneratedImage>;
}

export interface HttpCallRequest {
  method: string;
  url: string;
  /** JSON text, or null for no body. */
  body: string | null;
}

export interface HttpCallResponse {
  status: number;
  contentType: string | null;
  body: string;
}

/** The http node's transport (src/agents/http): every policy check lives behind it. */
export interface HttpCaller {
  call(request: HttpCallRequest, signal: AbortSignal, context: { requestId: string; nodeId: string }): Promise<HttpCallResponse>;
}

export interface RuntimeDependencies {
  catalog: Pick<Catalog, 'resolve'>;
  /**
   * The run's request through the model-call path: every llm and image call is checked (model,
   * input policy), reserved against the caller's key caps and made through it, priced in its record.
   */
  call: Pick<RequestCall, 'subcall' | 'metered' | 'toolCalled' | 'guarded' | 'requestId'>;
  /** The gateway's MCP tools, for llm nodes with `tools` (the caller's allow-lists apply); none: such a node fails. */
  tools?: AgentTools;
  /** Whose caps the run's model calls count against. */
  principal: Principal;
  limits: RunLimits;
  media: RunMedia;
  http: HttpCaller;
  requestId: string;
  /** Aborts the run (client gone, shutdown); the run's own timeout is added by the runtime. */
  signal?: AbortSignal;
  /** Keep what each node read and made (authoring tests show it; published runs do not keep it). */
  recordValues?: boolean;
}

/** Where llm nodes find the gateway's MCP tools. */
export type AgentTools = Pick<McpGateway, 'toolSource'>;

/** Usage and cost of one node that called a model (docs/agents.md: usage.nodes, cost.nodes). */
export interface NodeUsage {
  node: string;
  type: 'llm' | 'image';
  model: string;
  usage: TokenUsage | null;
  images: number | null;
  /** Integer micro-USD; null when the model has no pricing. */
  costMicroUsd: number | null;
}

/** One step of the trace kept with the run: no payloads, only what happened. */
export interface TraceStep {
  node: string;
  type: string;
  durationMs: number;
  branch?: string;
  model?: string;
  assetIds?: string[];
  status?: number;
}

/** What one step read (its rendered prompt, URL, tested value…) and the output it made, for authoring tests. */
export interface StepValues {
  input: SafeValue;
  output: SafeValue;
}

export interface RunResult {
  text: string;
  attachments: GeneratedImage[];
  generated: GeneratedImage[];
  nodes: NodeUsage[];
  trace: TraceStep[];
}
