export type { FinishedSpan, TracedRequest, Tracing, TracingSettings, UpstreamAttempt, UpstreamCall, UpstreamTracing } from './types.js';
import type { Tracing, TracingSettings } from './types.js';

/**
 * The tracing of a configured collector. The OpenTelemetry SDK is loaded only here, so an
 * instance without a collector neither loads nor runs any of it.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  const { OtlpTracing } = await import('./otlp-tracing.js');
  return new OtlpTracing(settings);
}
