import type { LimiterState } from '../limits/index.js';
import { Counter, Gauge, Histogram, Registry } from './registry.js';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] as const;
const WRITE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5] as const;
const MICRO_PER_USD = 1_000_000;

/** One finished request as metrics see it. `model` is a catalog id, `inferred` or `none`. */
export interface RequestObservation {
  route: string;
  model: string;
  status: number;
  seconds: number;
}

export interface UpstreamObservation {
  provider: string;
  model: string;
  seconds: number;
}

/** Read at scrape time from the services that own them. */
export interface MetricSources {
  logQueueDepth: () => number;
  limiter: () => LimiterState;
}

/** The gateway's metrics: what operators alert on, with bounded label sets. */
export class GatewayMetrics {
  private readonly registry = new Registry();
  private sources: MetricSources = {
    logQueueDepth: () => 0,
    limiter: () => ({ backend: 'memory', fallbackActive: false, fallbackAdmissions: 0 }),
  };

  private readonly requests = this.registry.register(
    new Counter('modelgate_requests_total', 'HTTP requests by route, model and status.', ['route', 'model', 'status']),
  );
  private readonly requestDuration = this.registry.register(
    new Histogram(
      'modelgate_request_duration_seconds',
      'Time from request start to the end of the response (streams: the last byte).',
      ['route', 'model', 'status'],
      LATENCY_BUCKETS,
    ),
  );
  private readonly upstreamDuration = this.registry.register(
    new Histogram(
      'modelgate_upstream_duration_seconds',
      'Time until the provider answered (headers or first stream frame).',
      ['provider', 'model'],
      LATENCY_BUCKETS,
    ),
  );
  private readonly tokens = this.registry.register(
    new Counter('modelgate_tokens_total', 'Tokens reported by providers, by model and kind (prompt, completion, cached_prompt).', [
      'model',
      'kind',
    ]),
  );
  private readonly cost = this.registry.register(
    new Counter('modelgate_cost_usd_total', 'Cost of requests in USD from the catalog pricing (unpriced models add nothing).', ['model'], MICRO_PER_USD),
  );
  private readonly rateLimited = this.registry.register(
    new Counter('modelgate_rate_limited_total', 'Requests refused by a per-key limit, by error code.', ['code']),
  );
  private readonly logRowsDropped = this.registry.register(
    new Counter('modelgate_log_records_dropped_total', 'Request log records dropped because the queue was full.'),
  );
  private readonly logBatchFailures = this.registry.register(
    new Counter('modelgate_log_write_failures_total', 'Request log batches whose write failed (they are retried).'),
  );
  private readonly logRowsWritten = this.registry.register(new Counter('modelgate_log_records_written_total', 'Request log records written.'));
  private readonly logBatchDuration = this.registry.register(
    new Histogram('modelgate_log_batch_write_seconds', 'Time to write one batch of request log records.', [], WRITE_BUCKETS),
  );

  constructor() {
    this.registry.register(
      new Gauge('modelgate_log_queue_depth', 'Request log records waiting to be written.', () => this.sources.logQueueDepth()),
    );
    this.registry.register(
      new Gauge('modelgate_limiter_redis_fallback', '1 while Redis is unreachable and limits use per-instance counters.', () =>
        this.sources.limiter().fallbackActive ? 1 : 0,
      ),
    );
    this.registry.register(
      new Gauge('modelgate_limiter_fallback_admissions', 'Admissions decided by the per-instance fallback since start.', () =>
        this.sources.limiter().fallbackAdmissions,
      ),
    );
  }

  watch(sources: MetricSources): void {
    this.sources = sources;
  }

  observeRequest(observation: RequestObservation): void {
    const labels = { route: observation.route, model: observation.model, status: String(observation.status) };
    this.requests.inc(labels);
    this.requestDuration.observe(labels, observation.seconds);
  }

  observeUpstream(observation: UpstreamObservation): void {
    this.upstreamDuration.observe({ provider: observation.provider, model: observation.model }, observation.seconds);
  }

  countTokens(model: string, prompt: number, completion: number, cachedPrompt: number): void {
    if (prompt > 0) this.tokens.inc({ model, kind: 'prompt' }, prompt);
    if (completion > 0) this.tokens.inc({ model, kind: 'completion' }, completion);
    if (cachedPrompt > 0) this.tokens.inc({ model, kind: 'cached_prompt' }, cachedPrompt);
  }

  addCost(model: string, microUsd: number): void {
    if (microUsd > 0) this.cost.inc({ model }, microUsd);
  }

  countRateLimited(code: string): void {
    this.rateLimited.inc({ code });
  }

  /** Events of the request log writer. */
  readonly logWriter = {
    rowsDropped: (count: number) => this.logRowsDropped.inc({}, count),
    batchWritten: (rows: number, seconds: number) => {
      this.logRowsWritten.inc({}, rows);
      this.logBatchDuration.observe({}, seconds);
    },
    batchFailed: () => this.logBatchFailures.inc(),
  };

  render(): string {
    return this.registry.render();
  }
}
