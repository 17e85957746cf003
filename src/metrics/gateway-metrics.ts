import type { LimiterState } from '../limits/index.js';
import { Counter, Gauge, Histogram, Registry, type CounterSeries, type HistogramSeries, type Labels } from './registry.js';
import { RoutingMetrics } from './routing-metrics.js';
import { McpMetrics } from './mcp-metrics.js';
import { CacheMetrics } from './cache-metrics.js';

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
  logQueueBytes: () => number;
  /** The request log's size as last measured (every minute); null before the first measure. */
  logStore: () => { databaseBytes: number; payloadBytes: number; records: number } | null;
  limiter: () => LimiterState;
}

/** The series one model's tokens and cost go to, made on first use (a series shows once it exists). */
interface ModelSeries {
  prompt?: CounterSeries;
  completion?: CounterSeries;
  cachedPrompt?: CounterSeries;
  cost?: CounterSeries;
}

function entry<K, V>(map: Map<K, V>, key: K, make: () => NoInfer<V>): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

const newMap = <K, V>() => new Map<K, V>();

/**
 * The gateway's metrics: what operators alert on, with bounded label sets. Every request
 * observes several series; their handles are kept by label value (route, model, status: the
 * same few strings each time, whose hashes V8 keeps) instead of being looked up through
 * label objects on each observation.
 */
export class GatewayMetrics {
  private readonly registry = new Registry();
  /** Set in a `serve --workers` process: collects every worker's metrics for a scrape. */
  private gather: (() => Promise<string>) | undefined;
  private sources: MetricSources = {
    logQueueDepth: () => 0,
    logQueueBytes: () => 0,
    logStore: () => null,
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
  private readonly guardrailVerdicts = this.registry.register(
    new Counter('modelgate_guardrail_verdicts_total', 'Verdicts of guardrails, by guardrail, stage (input, output) and outcome (passed, masked, blocked, logged, error).', ['guardrail', 'stage', 'outcome']),
  );
  private readonly providerFaults = this.registry.register(
    new Counter(
      'modelgate_provider_faults_total',
      "Provider calls that failed for a reason only the operator can fix: fault credential_refused (the provider refused the gateway's credential or account) or unreachable.",
      ['provider', 'fault'],
    ),
  );
  private readonly logRowsDropped = this.registry.register(
    new Counter('modelgate_log_records_dropped_total', 'Request log records dropped because the queue was full.'),
  );
  private readonly logPayloadsShed = this.registry.register(
    new Counter('modelgate_log_payloads_shed_total', 'Request log records whose payloads were shed because the queue held logs.queueMaxBytes (the records were kept).'),
  );
  private readonly logRowsRefused = this.registry.register(
    new Counter('modelgate_log_records_refused_total', 'Request log records the database refused for their data (left out; their request ids are in the process log).'),
  );
  private readonly logBatchFailures = this.registry.register(
    new Counter('modelgate_log_write_failures_total', 'Request log batches whose write failed (they are retried).'),
  );
  private readonly logRowsWritten = this.registry.register(new Counter('modelgate_log_records_written_total', 'Request log records written.'));
  private readonly logThreadRestarts = this.registry.register(
    new Counter('modelgate_log_writer_restarts_total', "Times the request log's writer thread stopped without answering and was replaced (its batch was written again)."),
  );
  private readonly logBatchDuration = this.registry.register(
    new Histogram('modelgate_log_batch_write_seconds', 'Time to write one batch of request log records.', [], WRITE_BUCKETS),
  );
  /** Deployments, retries, fallbacks and cooldowns of routed models. */
  readonly routing = new RoutingMetrics(this.registry);
  /** Tool calls and server health of the MCP gateway. */
  readonly mcp = new McpMetrics(this.registry);
  /** Hits, misses, evictions and bytes of the response cache. */
  readonly cache = new CacheMetrics(this.registry);

  constructor() {
    this.registry.register(
      new Gauge('modelgate_log_queue_depth', 'Request log records waiting to be written.', () => this.sources.logQueueDepth()),
    );
    this.registry.register(
      new Gauge('modelgate_log_queue_bytes', 'Payload, detail and media characters of the request log records waiting to be written.', () =>
        this.sources.logQueueBytes(),
      ),
    );
    this.registry.register(
      new Gauge('modelgate_log_store_bytes', 'Bytes the request log takes on disk (SQLite: the database file; PostgreSQL: request_logs with indexes and TOAST), measured every minute.', () =>
        this.sources.logStore()?.databaseBytes ?? 0,
      ),
    );
    this.registry.register(
      new Gauge('modelgate_log_store_payload_bytes', 'Compressed payload bytes of the request log records written since the write sequence.', () =>
        this.sources.logStore()?.payloadBytes ?? 0,
      ),
    );
    this.registry.register(
      new Gauge('modelgate_log_store_records', 'Request log records written since the write sequence (older ones are not counted).', () =>
        this.sources.logStore()?.records ?? 0,
      ),
    );
    this.registry.register(
      new Gauge('modelgate_limiter_redis_fallback', '1 while Redis is unreachable and limits use per-instance counters.', () =>
        this.sources.limiter().fallbackActive ? 1 : 0,
      ),
    );
    this.registry.register(
      new Gauge('modelgate_limiter_fail_closed', '1 when a Redis outage refuses limited keys (limits.redisOutage: failClosed), 0 when each instance then counts on its own.', () =>
        this.sources.limiter().outageMode === 'failClosed' ? 1 : 0,
      ),
    );
    this.registry.register(
      new Gauge('modelgate_limiter_local_share', 'The share of each key limit this instance enforces on its own while Redis is away in local mode: 1 ÷ the instances seen sharing Redis (1 without Redis).', () =>
        1 / (this.sources.limiter().instancesSeen ?? 1),
      ),
    );
    this.registry.register(
      new Gauge('modelgate_limiter_fallback_admissions', 'Admissions decided by the per-instance fallback since start.', () =>
        this.sources.limiter().fallbackAdmissions,
      ),
    );
  }

  private readonly requestSeries = new Map<string, Map<string, Map<number, { count: CounterSeries; duration: HistogramSeries }>>>();
  private readonly upstreamSeries = new Map<string, Map<string, HistogramSeries>>();
  private readonly modelSeries = new Map<string, ModelSeries>();

  watch(sources: MetricSources): void {
    this.sources = sources;
  }

  observeRequest(observation: RequestObservation): void {
    const { route, model, status } = observation;
    const byStatus = entry(entry(this.requestSeries, route, newMap), model, newMap);
    let series = byStatus.get(status);
    if (series === undefined) {
      const labels = { route, model, status: String(status) };
      series = { count: this.requests.seriesOf(labels), duration: this.requestDuration.seriesOf(labels) };
      byStatus.set(status, series);
    }
    this.requests.add(series.count);
    this.requestDuration.record(series.duration, observation.seconds);
  }

  observeUpstream(observation: UpstreamObservation): void {
    const { provider, model } = observation;
    const byModel = entry(this.upstreamSeries, provider, newMap);
    const series = entry(byModel, model, () => this.upstreamDuration.seriesOf({ provider, model }));
    this.upstreamDuration.record(series, observation.seconds);
  }

  countTokens(model: string, prompt: number, completion: number, cachedPrompt: number): void {
    const series = entry(this.modelSeries, model, () => ({}));
    if (prompt > 0) this.tokens.add((series.prompt ??= this.tokens.seriesOf({ model, kind: 'prompt' })), prompt);
    if (completion > 0) this.tokens.add((series.completion ??= this.tokens.seriesOf({ model, kind: 'completion' })), completion);
    if (cachedPrompt > 0) this.tokens.add((series.cachedPrompt ??= this.tokens.seriesOf({ model, kind: 'cached_prompt' })), cachedPrompt);
  }

  addCost(model: string, microUsd: number): void {
    if (microUsd <= 0) return;
    const series = entry(this.modelSeries, model, () => ({}));
    this.cost.add((series.cost ??= this.cost.seriesOf({ model })), microUsd);
  }

  countRateLimited(code: string): void {
    this.rateLimited.inc({ code });
  }

  /** One guardrail verdict (its name is the operator's, from the config: a bounded label). */
  countGuardrailVerdict(guardrail: string, stage: string, outcome: string): void {
    this.guardrailVerdicts.inc({ guardrail, stage, outcome });
  }

  countProviderFault(provider: string, fault: string): void {
    this.providerFaults.inc({ provider, fault });
  }

  /** Events of the request log writer. */
  readonly logWriter = {
    rowsDropped: (count: number) => this.logRowsDropped.inc({}, count),
    payloadsShed: (count: number) => this.logPayloadsShed.inc({}, count),
    rowsRefused: (count: number) => this.logRowsRefused.inc({}, count),
    batchWritten: (rows: number, seconds: number) => {
      this.logRowsWritten.inc({}, rows);
      this.logBatchDuration.observe({}, seconds);
    },
    batchFailed: () => this.logBatchFailures.inc(),
    threadRestarted: () => this.logThreadRestarts.inc(),
  };

  /** This process's metrics; `labels` go on every sample. */
  render(labels?: Labels): string {
    return this.registry.render(labels);
  }

  /**
   * What `GET /metrics` answers: this process's metrics, or what `gather` collects (the
   * metrics of every `serve --workers` process, whichever of them the scrape reached).
   */
  scrape(): Promise<string> | string {
    return this.gather === undefined ? this.render() : this.gather();
  }

  gatherWith(gather: () => Promise<string>): void {
    this.gather = gather;
  }
}
