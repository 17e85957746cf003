import type { Catalog } from '../catalog/index.js';
import type { FinishedRequest, RequestRecord } from '../logs/index.js';
import type { GatewayMetrics } from '../metrics/index.js';
import type { Tracing } from '../telemetry/index.js';
import type { FinishedRequestObserver } from './request-call.js';
import type { GuardrailVerdict } from '../guardrails/index.js';

const RATE_LIMIT_CODES = new Set(['rate_limit_exceeded', 'daily_token_cap_exceeded', 'monthly_cost_cap_exceeded', 'budget_exceeded']);

export interface ObserverParts {
  catalog: Pick<Catalog, 'get'>;
  metrics: GatewayMetrics;
  tracing: Tracing | undefined;
  /** Where a reservation that could not be settled is told. */
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The verdicts of the guardrails a request ran, as its record keeps them (request-call.ts). */
export function guardrailVerdictsOf(record: RequestRecord): readonly GuardrailVerdict[] | undefined {
  return (record.extra as { guardrails?: readonly GuardrailVerdict[] } | null)?.guardrails;
}

/** Every finished request in the metrics (its model a catalog id or `inferred`, to bound their labels) and, with a collector, its span ended. */
export function finishedRequestObserver(parts: ObserverParts): FinishedRequestObserver {
  const { catalog, metrics, tracing } = parts;
  const modelLabel = (record: RequestRecord): string => {
    if (record.resolvedModel === null) return 'none';
    return catalog.get(record.resolvedModel) !== undefined ? record.resolvedModel : 'inferred';
  };
  return {
    finished(finished: FinishedRequest): void {
      const { record, status, latencyMs, cost } = finished;
      const model = modelLabel(record);
      metrics.observeRequest({ route: record.endpoint, model, status, seconds: latencyMs / 1000 });
      if (record.upstreamLatencyMs !== null && record.provider !== null) {
        metrics.observeUpstream({ provider: record.provider, model, seconds: record.upstreamLatencyMs / 1000 });
      }
      if (record.usage !== null) metrics.countTokens(model, record.usage.promptTokens, record.usage.completionTokens, record.usage.cachedPromptTokens ?? 0);
      if (cost.microUsd !== null) metrics.addCost(model, cost.microUsd);
      if (record.errorCode !== null && RATE_LIMIT_CODES.has(record.errorCode)) metrics.countRateLimited(record.errorCode);
      const verdicts = guardrailVerdictsOf(record);
      if (verdicts !== undefined) for (const verdict of verdicts) metrics.countGuardrailVerdict(verdict.guardrail, verdict.stage, verdict.outcome);
      tracing?.endRequest(finished);
    },
    settlementFailed(error: unknown): void {
      parts.warn({ err: error }, 'settling a limit reservation failed');
    },
  };
}
