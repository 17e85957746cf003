import type { IncomingHttpHeaders } from 'node:http';
import type { TokenUsage } from '../model-api/index.js';

/** A gateway request in flight, as its span reads it (its mode and model become known as it goes). */
export interface TracedRequest {
  readonly requestId: string;
  readonly endpoint: string;
  /** The request log's mode (`chat`, `embedding`, `agent`, `tool`, …). */
  readonly mode: string | null;
  readonly resolvedModel: string | null;
}

/** What a request's span ends with: the facts of its finished record (the request log's FinishedRequest has them all). */
export interface FinishedSpan {
  readonly record: TracedRequest & {
    readonly requestedModel: string | null;
    readonly provider: string | null;
    readonly usage: TokenUsage | null;
    readonly errorCode: string | null;
    /** Facts beyond the columns; its `guardrails` verdicts are on the span. */
    readonly extra?: Readonly<Record<string, unknown>> | null;
  };
  readonly status: number;
  readonly cost: { readonly microUsd: number | null };
}

/** One call to a provider as the tracing sees it. */
export interface UpstreamCall {
  /** The gateway request the call is made for; unknown (a call outside a request) makes a span without a parent. */
  requestId: string | undefined;
  provider: string;
  url: string;
  method: string;
  headers: Readonly<Record<string, string>>;
}

/** The span of one upstream attempt, started when the call is dispatched. */
export interface UpstreamAttempt {
  /** The call's headers with the attempt's `traceparent` (and the client's `tracestate`). */
  readonly headers: Record<string, string>;
  /** The provider's HTTP status, null when none came; `error` when the call failed. Ends the span once (later calls do nothing). */
  end(status: number | null, error?: unknown): void;
}

/** The upstream side of tracing: what the provider HTTP layer is given. */
export interface UpstreamTracing {
  startAttempt(call: UpstreamCall): UpstreamAttempt;
}

/**
 * Traces of gateway requests and their upstream attempts, exported over OTLP. Only built when
 * a collector is configured: without one there is no tracing object, and the request path
 * does nothing for it.
 */
export interface Tracing extends UpstreamTracing {
  /** Starts the span of a gateway request, the child of the client's `traceparent` when it sent one. */
  startRequest(request: TracedRequest, method: string, headers: IncomingHttpHeaders): void;
  /** Ends it with what the finished record says once the response ended. */
  endRequest(finished: FinishedSpan): void;
  /** Exports what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

export interface TracingSettings {
  /** Base URL of the OTLP/HTTP collector; spans go to `<otlpEndpoint>/v1/traces`. */
  otlpEndpoint: string;
  serviceName: string;
  serviceVersion: string;
}
