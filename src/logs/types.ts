import type { ModelMode } from '../catalog/index.js';
import type { TokenUsage } from '../model-api/index.js';
import type { Admission } from '../limits/index.js';
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

/**
 * What the gateway knows about one request, filled in by the route as it goes and written
 * to the request log when the response has ended (streams included).
 */
export interface RequestRecord {
  requestId: string;
  startedAt: number;
  endpoint: string;
  platform: string | null;
  mode: ModelMode | 'vetting' | 'agent' | 'utility' | null;
  requestedModel: string | null;
  resolvedModel: string | null;
  provider: string | null;
  streaming: boolean;
  usage: TokenUsage | null;
  imageCount: number | null;
  audioSeconds: number | null;
  media: MediaSummary | null;
  /** The request body as the route saw it, before redaction. */
  requestPayload: unknown;
  responsePayload: unknown;
  /**
   * responsePayload as the JSON the caller was sent, when the route serialised it already:
   * the log keeps that text instead of serialising the payload again (unless redaction changed it).
   */
  responsePayloadJson?: string;
  /** Upstream details (status of a credential rejection, …) for the admin API only. */
  logDetail: Record<string, unknown> | null;
  errorCode: LoggedErrorCode | null;
  /** Every try of the provider call when the model is routed (docs/routing.md); absent otherwise. */
  attempts?: AttemptRecord[];
  upstreamLatencyMs: number | null;
  /** Set when the limiter admitted the request; settled when the response ends. */
  admission: Admission | null;
  /** The slug of the agent a run belongs to, for the log's list; null for every other request. */
  agent: string | null;
  /** Whether this is an agent test run (authoring), run id, agent version, … */
  extra: Record<string, unknown> | null;
  /**
   * Cost already computed by the route, integer micro-USD (an agent run spans several models:
   * the sum of its nodes). When set, the log uses it instead of pricing `resolvedModel`.
   */
  costMicroUsd?: number | null;
  /**
   * Work that keeps updating this record after the reply was handed to Fastify (a stream
   * pump). When the client goes away mid-response, the log waits for it (bounded by the
   * upstream timeouts) so usage and payload reported late are still written and settled.
   */
  pendingWork?: Promise<unknown>;
}

/** Which records a caller may see: the admin token sees every project; a project-scoped caller only its own. */
export interface LogAccess {
  /** null = every project. */
  projectId: string | null;
}

/** Filters of the log list, export and usage queries (all optional, combined with AND). */
export interface LogFilter {
  keyId?: string;
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

export type UsageGrouping = 'day' | 'model' | 'key' | 'project';
