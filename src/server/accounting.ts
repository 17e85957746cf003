import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import { createLimiter, type Limiter } from '../limits/index.js';
import { LogStore, LogWriter, LogWriterThread, RefusalSummary, RETENTION_DEFAULTS, RetentionJob, SIZE_CAP_DEFAULTS, SizeCapJob, type RetentionStore } from '../logs/index.js';
import { GatewayMetrics } from '../metrics/index.js';
import { ResponseStore } from '../responses/index.js';
import type { Storage } from '../storage/index.js';

/** Client addresses whose refused unauthenticated requests are summarised apart per interval (~1 KB each). */
const REFUSAL_ADDRESSES = 10_000;
const MIB = 1024 * 1024;

export interface Accounting {
  readonly logs: { readonly store: LogStore; readonly writer: LogWriter; readonly refusals: RefusalSummary; readonly sizeCap: SizeCapJob };
  readonly limits: Limiter;
  readonly metrics: GatewayMetrics;
  /** Stored responses of the Responses API, deleted with the request log's retention. */
  readonly responses: ResponseStore;
  /** Deletes other rows with the request log's retention (what callers and models wrote is kept as long as payloads are). */
  readonly retain: (rows: RetentionStore, name: string) => void;
}

/**
 * The request log (store, background writer, retention job, which agent history and stored responses share), the limiter (seeded from the
 * log, or Redis when configured) and the metrics that watch them. Each registers its own
 * shutdown; tasks run in reverse, so queued records are flushed after the others stopped.
 */
export async function startAccounting(
  config: GatewayConfig,
  storage: Storage,
  logger: Logger,
  onShutdown: (task: () => Promise<void>) => void,
): Promise<Accounting> {
  const metrics = new GatewayMetrics();
  const store = new LogStore(storage);
  const entries = { payloads: config.logs.payloads, maxPayloadBytes: config.logs.maxPayloadBytes };
  const writer = new LogWriter(new LogWriterThread({ storage: storage.location, entries }, logger, metrics.logWriter), config.logs, logger, metrics.logWriter);
  onShutdown(() => writer.close());
  const refusals = new RefusalSummary((finished) => writer.push(finished), { intervalMs: config.logs.unauthenticatedSummaryMs, maxAddresses: REFUSAL_ADDRESSES });
  // Registered after the writer's close, so it runs before it: the summaries are written too.
  onShutdown(async () => refusals.close());

  const limits = await createLimiter(
    { redisUrl: config.redisUrl, redisKeyPrefix: config.limits.redisKeyPrefix, redisCommandTimeoutMs: config.limits.redisCommandTimeoutMs, redisOutage: config.limits.redisOutage, outageInstances: config.limits.outageInstances },
    (now) => store.limitSeeds(now),
    logger,
  );
  onShutdown(() => limits.close());

  const retain = (rows: RetentionStore, name: string) => {
    const retention = new RetentionJob(rows, { retentionDays: config.logs.retentionDays, ...RETENTION_DEFAULTS, rows: name }, logger);
    retention.start();
    onShutdown(() => retention.stop());
  };
  retain(store, 'request log rows');
  const responses = new ResponseStore(storage.db);
  retain(responses, 'stored responses');

  const sizeCap = new SizeCapJob(store, { maxBytes: config.logs.maxSizeMb * MIB, ...SIZE_CAP_DEFAULTS }, logger);
  sizeCap.start();
  onShutdown(() => sizeCap.stop());

  metrics.watch({ logQueueDepth: () => writer.depth, logQueueBytes: () => writer.queuedBytes, logStore: () => sizeCap.latest, limiter: () => limits.state() });
  return { logs: { store, writer, refusals, sizeCap }, limits, metrics, responses, retain };
}
