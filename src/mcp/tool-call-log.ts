import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorCode } from '../errors/index.js';
import type { GuardrailVerdict } from '../guardrails/index.js';
import type { Caller, LogWriter, RequestRecord } from '../logs/index.js';
import type { McpMetrics } from '../metrics/index.js';
import type { TracedRequest, Tracing } from '../telemetry/index.js';

/** Where tool-call records go: the request log's writer, metrics and traces. */
export interface ToolCallSinks {
  writer: Pick<LogWriter, 'push'>;
  metrics: McpMetrics;
  tracing: Tracing | undefined;
}

/** One tool call as it starts: who, which tool, with what. */
export interface ToolCallStart {
  requestId: string;
  caller: Caller;
  platform: string | null;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** The name the caller used: `server__tool`. */
  qualifiedName: string;
  arguments: unknown;
  /** The HTTP request's headers: its `traceparent` parents the call's span. */
  headers: IncomingHttpHeaders;
  /** The metric label of the tool, asked when the call ended: its name when the server listed it, else `other`. */
  toolLabel: () => string;
}

/** How a tool call ended: its result (a tool's own error included, `isError`), or the gateway's error. */
export type ToolCallEnd = ({ outcome: 'ok' | 'tool_error'; result: unknown } | { outcome: 'failed'; code: ErrorCode; status: number; message: string }) & {
  /** The verdicts of the guardrails that ran on the call (docs/guardrails.md#mcp-tool-calls). */
  guardrails?: readonly GuardrailVerdict[];
};

/**
 * The request-log record of one tool call (decisions §12: `endpoint: /mcp`, `mode: tool`). The
 * tool's gateway name stands where a model call's model does, its server where the provider
 * does; arguments and result are the payloads, redacted and size-capped by the log like any.
 */
function toolCallRecord(call: ToolCallStart, startedAt: number, ending: ToolCallEnd, latencyMs: number): RequestRecord {
  const failed = ending.outcome === 'failed';
  return {
    requestId: call.requestId,
    startedAt,
    endpoint: '/mcp',
    platform: call.platform,
    mode: 'tool',
    requestedModel: call.qualifiedName,
    resolvedModel: null,
    provider: call.server,
    streaming: false,
    usage: null,
    imageCount: null,
    audioSeconds: null,
    media: null,
    requestPayload: { name: call.qualifiedName, arguments: call.arguments ?? null },
    responsePayload: failed ? null : ending.result,
    logDetail: failed ? { error_message: ending.message } : ending.outcome === 'tool_error' ? { tool_error: true } : null,
    errorCode: failed ? ending.code : null,
    droppedFields: [],
    upstreamLatencyMs: failed ? null : latencyMs,
    agent: null,
    extra: { mcp_server: call.server, tool: call.tool, ...(ending.guardrails !== undefined && ending.guardrails.length > 0 ? { guardrails: ending.guardrails } : {}) },
  };
}

/** A tool call in flight, as its span reads it. */
function tracedCall(call: ToolCallStart): TracedRequest {
  return { requestId: call.requestId, endpoint: '/mcp', mode: 'tool', resolvedModel: null };
}

/**
 * The one place tool-call records are made and written: `begin` when the call starts (its span
 * starts), `end` of the returned recording when it ended (record to the log writer, metrics,
 * span ended).
 */
export class ToolCallLog {
  constructor(private readonly sinks: ToolCallSinks) {}

  begin(call: ToolCallStart): { end(ending: ToolCallEnd): void } {
    const startedAt = Date.now();
    this.sinks.tracing?.startRequest(tracedCall(call), 'POST', call.headers);
    let ended = false;
    return {
      end: (ending) => {
        if (ended) return;
        ended = true;
        const latencyMs = Date.now() - startedAt;
        const status = ending.outcome === 'failed' ? ending.status : 200;
        const record = toolCallRecord(call, startedAt, ending, latencyMs);
        const finished = { record, caller: call.caller, status, latencyMs, cost: { microUsd: null, startingPrice: false } };
        this.sinks.metrics.toolCallEnded(call.server, call.toolLabel(), ending.outcome === 'failed' ? ending.code : ending.outcome, latencyMs / 1000);
        this.sinks.tracing?.endRequest(finished);
        this.sinks.writer.push(finished);
      },
    };
  }
}
