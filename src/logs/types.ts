import type { ModelMode } from '../catalog/index.js';
import type { TokenUsage } from '../model-api/index.js';
import type { ErrorCode } from '../errors/index.js';

/** The error code a record keeps: a code of docs/errors.md, or `client_closed` (status 499: the client went away first). */
export type LoggedErrorCode = ErrorCode | 'client_closed';

/** One try of a provider call, as the request log keeps it (several when routing retried or fell back). */
export interface AttemptRecord {
  /** 1 for the first try. */
  attempt: number;
  /** The catalog model the try was for (a fallback's own id after a fallback). */
  model: string;
  /** The deployment's name (`provider` or `provider#N`, or the name the configuration gives it). */
  deployment: string;
  provider: string;
  /** `ok`, or the error code the try ended with. */
  outcome: 'ok' | ErrorCode;
  /** Milliseconds until the answer began (a stream's first frame) or the try failed. */
  latencyMs: number;
  /** For a failure the provider answered with an HTTP status: that status (admin detail only, as every upstream fact). */
  upstreamStatus?: number;
}

/** Metadata about media a request carried (never the bytes). */
export interface MediaSummary {
  images: number;
  files: number;
  mimeTypes: string[];
  bytes: number;
  /** Archived asset ids (agents). */
  assetIds?: string[];
}

/** The mode a record is logged under: a catalog mode, or the kind of request that makes no single model call. */
export type RecordMode = ModelMode | 'vetting' | 'agent' | 'utility' | 'tool';

/**
 * One model call a request made, as the log keeps it when a request makes several (VETTING's
 * drafts and verifications, an agent's nodes): the model that served it, its usage and cost.
 */
export interface ModelCallRecord {
  /** What the call was for: `draft`, `verification`, `node:<id>`; null for a request's one call. */
  purpose: string | null;
  model: string;
  provider: string;
  usage: TokenUsage | null;
  imageCount: number | null;
  /** Integer micro-USD; null when it could not be priced. */
  costMicroUsd: number | null;
  /** `ok` once the provider began answering, else the error code it failed with. */
  outcome: 'ok' | ErrorCode;
}

/** A request's use of the response cache (docs/caching.md), as its record keeps it. */
export interface CacheRecord {
  status: 'hit' | 'miss' | 'bypass';
  /** The cache policy that applied. */
  policy: string;
  /** Why a request the policy applies to left the cache out (`requested`, `not_deterministic`, `media`, …); null otherwise. */
  reason: string | null;
  /** A hit: the request whose answer it got. */
  sourceRequestId: string | null;
  /** A hit: what the answer cost when it was made (integer micro-USD); null when it could not be priced. */
  savedMicroUsd: number | null;
  /** A semantic hit: the cosine similarity of its last user turn to the answer's; null for an exact hit or none. */
  similarity: number | null;
}

/**
 * One MCP tool call a request's tool loop made (a Responses `mcp` tool, an agent's llm node
 * with tools), listed with the model calls in the order they happened. As in a tool call's
 * own record at /mcp, the tool's gateway name stands where a model call's model does and its
 * server where the provider does; a tool call has no usage and no price.
 */
export interface ToolCallRecord {
  purpose: 'tool';
  /** The tool's gateway name, `server__tool`. */
  model: string;
  /** The MCP server. */
  provider: string;
  usage: null;
  imageCount: null;
  costMicroUsd: null;
  latencyMs: number;
  /** `ok`, `tool_error` (the tool said it failed), or the error code the call failed with. */
  outcome: 'ok' | 'tool_error' | ErrorCode;
}

/**
 * What the gateway knows about one request once its response has ended (streams included):
 * one plain value, made by the model-call path (src/calls) and handed to the request log.
 */
export interface RequestRecord {
  readonly requestId: string;
  readonly startedAt: number;
  readonly endpoint: string;
  readonly platform: string | null;
  readonly mode: RecordMode | null;
  readonly requestedModel: string | null;
  readonly resolvedModel: string | null;
  readonly provider: string | null;
  readonly streaming: boolean;
  readonly usage: TokenUsage | null;
  readonly imageCount: number | null;
  readonly audioSeconds: number | null;
  readonly media: MediaSummary | null;
  /** The request body as the route saw it, before redaction. */
  readonly requestPayload: unknown;
  /**
   * The request body as the JSON bytes received, in place of requestPayload (null then) for a
   * large body kept as received: copying bytes to the log's thread costs the event loop far
   * less than cloning the parsed object, and the thread parses them.
   */
  readonly requestPayloadJson?: Uint8Array;
  readonly responsePayload: unknown;
  /**
   * responsePayload as the JSON the caller was sent, when the route serialised it already:
   * the log keeps that text instead of serialising the payload again (unless redaction changed it).
   */
  readonly responsePayloadJson?: string;
  /** Upstream and failure details (the provider's status of a credential rejection, …) for the admin API only. */
  readonly logDetail: Record<string, unknown> | null;
  readonly errorCode: LoggedErrorCode | null;
  /** Every try of the provider call when the model is routed (docs/routing.md); absent otherwise. */
  readonly attempts?: readonly AttemptRecord[];
  /** The request's model calls, when it made more than one, and the tool calls of its tool loop. */
  readonly calls?: readonly (ModelCallRecord | ToolCallRecord)[];
  /** Fields of the request the gateway left out as hints the target does not take (decisions §9), by path. */
  readonly droppedFields: readonly string[];
  readonly upstreamLatencyMs: number | null;
  /** The slug of the agent a run belongs to, for the log's list; null for every other request. */
  readonly agent: string | null;
  /** The end user the request named (decisions §15), as the log keeps it (hashed when its project says so); absent or null: none. */
  readonly endUser?: string | null;
  /** Whether this is an agent test run (authoring), run id, agent version, … */
  readonly extra: Record<string, unknown> | null;
  /** The request's use of the response cache; absent when no cache policy applied. */
  readonly cache?: CacheRecord;
}

/** Which records a caller may see: the admin token sees every project; a project-scoped caller only its own. */
export interface LogAccess {
  /** null = every project. */
  projectId: string | null;
  /** When given, only these projects (a team admin's teams' projects; none when empty). */
  projectIds?: readonly string[];
}

/** Filters of the log list, export and usage queries (all optional, combined with AND). */
export interface LogFilter {
  keyId?: string;
  /** Records of the keys with this name now (names are not unique: every key so named). */
  keyName?: string;
  /** Matches the requested model or the model it resolved to. */
  model?: string;
  projectId?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /** HTTP status range, inclusive. */
  status?: { min: number; max: number };
  /** The endpoint path, e.g. /v1/chat/completions. */
  endpoint?: string;
  /** The caller's X-Platform-ID. */
  platform?: string;
}

export type UsageGrouping = 'day' | 'model' | 'key' | 'project' | 'team' | 'agent' | 'tag' | 'end_user';
