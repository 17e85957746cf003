import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Context, type HrTime, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator, hrTime } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { FinishedSpan, TracedRequest, Tracing, TracingSettings, UpstreamAttempt, UpstreamCall } from './types.js';

/**
 * The GenAI attributes (OpenTelemetry semantic conventions for generative AI, "development"
 * status). Spelled out here: the package ships them only in its unstable entry point.
 */
const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** The gateway's own: no convention names these. */
const MODELGATE_REQUEST_ID = 'modelgate.request_id';
const MODELGATE_COST_USD = 'modelgate.cost_usd';
const MODELGATE_ERROR_CODE = 'modelgate.error_code';
/** The request's guardrail outcomes, as the x-modelgate-guardrails header gives them. */
const MODELGATE_GUARDRAILS = 'modelgate.guardrails';
const MODELGATE_ATTEMPT = 'modelgate.attempt';

const MICRO_PER_USD = 1_000_000;

/** The GenAI operation of a request mode; null for what the conventions do not name (utilities). */
function operationOf(mode: string | null): string | null {
  switch (mode) {
    case 'chat':
    case 'vetting':
      return 'chat';
    case 'embedding':
      return 'embeddings';
    case 'image_generation':
    case 'audio_speech':
    case 'audio_transcription':
      return 'generate_content';
    case 'agent':
      return 'invoke_agent';
    case 'tool':
      return 'execute_tool';
    default:
      return null;
  }
}

/** The served attempt waits for the request's end, which knows the tokens it used. */
interface ServedAttempt {
  span: Span;
  endTime: HrTime;
}

/** One traced gateway request. */
interface RequestTrace {
  span: Span;
  /** The request span as parent of its attempts. */
  context: Context;
  request: TracedRequest;
  attempts: number;
  served: ServedAttempt | null;
}

/** The tracing of one process: a tracer provider with a batching OTLP/HTTP (JSON) exporter. */
export class OtlpTracing implements Tracing {
  private readonly provider: NodeTracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  /** Requests in flight by request id, for their upstream attempts (which know only the id). */
  private readonly requests = new Map<string, RequestTrace>();

  constructor(settings: TracingSettings) {
    const exporter = new OTLPTraceExporter({ url: `${settings.otlpEndpoint.replace(/\/+$/, '')}/v1/traces` });
    this.provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: settings.serviceVersion }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    this.tracer = this.provider.getTracer('modelgate', settings.serviceVersion);
  }

  startRequest(request: TracedRequest, method: string, headers: IncomingHttpHeaders): void {
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(
      `${method} ${request.endpoint}`,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_HTTP_ROUTE]: request.endpoint, [MODELGATE_REQUEST_ID]: request.requestId } },
      parent,
    );
    this.requests.set(request.requestId, { span, context: trace.setSpan(parent, span), request, attempts: 0, served: null });
  }

  endRequest(finished: FinishedSpan): void {
    const { record, status } = finished;
    const costMicroUsd = finished.cost.microUsd;
    const traced = this.requests.get(record.requestId);
    if (traced === undefined) return;
    this.requests.delete(record.requestId);
    const { span } = traced;
    const operation = operationOf(record.mode);
    if (operation !== null) span.setAttribute(GEN_AI_OPERATION_NAME, operation);
    // A tool call's record names the tool where a model call names its model (docs/mcp.md).
    if (record.mode === 'tool' && record.requestedModel !== null) span.setAttribute(GEN_AI_TOOL_NAME, record.requestedModel);
    else if (record.requestedModel !== null) span.setAttribute(GEN_AI_REQUEST_MODEL, record.requestedModel);
    if (record.resolvedModel !== null) span.setAttribute(GEN_AI_RESPONSE_MODEL, record.resolvedModel);
    if (record.provider !== null) span.setAttribute(GEN_AI_PROVIDER_NAME, record.provider);
    setUsage(span, record);
    if (costMicroUsd !== null) span.setAttribute(MODELGATE_COST_USD, costMicroUsd / MICRO_PER_USD);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    const guardrails = (record.extra as { guardrails?: readonly { guardrail: string; stage: string; outcome: string }[] } | null)?.guardrails;
    if (guardrails !== undefined) span.setAttribute(MODELGATE_GUARDRAILS, guardrails.map((verdict) => `${verdict.guardrail}:${verdict.stage}=${verdict.outcome}`).join(','));
    if (record.errorCode !== null) {
      span.setAttribute(MODELGATE_ERROR_CODE, record.errorCode);
      span.setAttribute(ATTR_ERROR_TYPE, record.errorCode);
    }
    // A server span is an error for a 5xx only: a 4xx is the client's doing.
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorCode ?? String(status) });
    if (traced.served !== null) {
      setUsage(traced.served.span, record);
      traced.served.span.end(traced.served.endTime);
    }
    span.end();
  }

  startAttempt(call: UpstreamCall): UpstreamAttempt {
    const traced = call.requestId === undefined ? undefined : this.requests.get(call.requestId);
    const request = traced?.request;
    const operation = request === undefined ? null : operationOf(request.mode);
    const model = request?.resolvedModel ?? null;
    const { hostname, port, protocol, origin, pathname } = new URL(call.url);
    const span = this.tracer.startSpan(
      operation === null ? `${call.method} ${call.provider}` : `${operation} ${model ?? call.provider}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [GEN_AI_PROVIDER_NAME]: call.provider,
          [ATTR_HTTP_REQUEST_METHOD]: call.method,
          [ATTR_SERVER_ADDRESS]: hostname,
          [ATTR_SERVER_PORT]: port === '' ? (protocol === 'https:' ? 443 : 80) : Number(port),
          // Without the query: a compatible provider's base URL may carry a credential there.
          [ATTR_URL_FULL]: `${origin}${pathname}`,
          ...(operation !== null ? { [GEN_AI_OPERATION_NAME]: operation } : {}),
          ...(model !== null ? { [GEN_AI_REQUEST_MODEL]: model } : {}),
          ...(traced !== undefined ? { [MODELGATE_ATTEMPT]: (traced.attempts += 1), [MODELGATE_REQUEST_ID]: traced.request.requestId } : {}),
        },
      },
      traced?.context ?? ROOT_CONTEXT,
    );
    const headers = { ...call.headers };
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
    let ended = false;
    return {
      headers,
      end: (status, error) => {
        if (ended) return;
        ended = true;
        if (status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
        const failed = error !== undefined || status === null || status >= 400;
        if (failed) {
          const type = errorTypeOf(status, error);
          span.setAttribute(ATTR_ERROR_TYPE, type);
          span.setStatus({ code: SpanStatusCode.ERROR, message: type });
        }
        // The attempt that served the request gets its tokens when the request ends.
        const live = traced !== undefined && this.requests.get(traced.request.requestId) === traced;
        if (!failed && live) {
          traced.served?.span.end(traced.served.endTime);
          traced.served = { span, endTime: hrTime() };
          return;
        }
        span.end();
      },
    };
  }

  async shutdown(): Promise<void> {
    for (const traced of this.requests.values()) traced.span.end();
    this.requests.clear();
    await this.provider.shutdown();
  }
}

function setUsage(span: Span, record: FinishedSpan['record']): void {
  if (record.usage === null) return;
  span.setAttribute(GEN_AI_USAGE_INPUT_TOKENS, record.usage.promptTokens);
  span.setAttribute(GEN_AI_USAGE_OUTPUT_TOKENS, record.usage.completionTokens);
}

/** error.type of a failed attempt: the failure's code (a connection error's, or provider_timeout for a deadline), else the HTTP status. */
function errorTypeOf(status: number | null, error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return status === null ? 'no_response' : String(status);
}
