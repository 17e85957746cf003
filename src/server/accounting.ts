import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import { ConversationStore } from '../agents/index.js';
import { createLimiter, type Limiter } from '../limits/index.js';
import { LogStore, LogWriter, RETENTION_DEFAULTS, RetentionJob, type RetentionStore } from '../logs/index.js';
import { GatewayMetrics } from '../metrics/index.js';
import type { Storage } from '../storage/index.js';

export interface Accounting {
  readonly logs: { readonly store: LogStore; readonly writer: LogWriter };
  readonly limits: Limiter;
  readonly metrics: GatewayMetrics;
}

/**
 * The request log (store, background writer, retention job, which agent history shares), the limiter (seeded from the
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
  const writer = new LogWriter(store, config.logs, logger, metrics.logWriter);
  onShutdown(() => writer.close());

  const limits = await createLimiter(
    { redisUrl: config.redisUrl, redisKeyPrefix: config.limits.redisKeyPrefix, redisCommandTimeoutMs: config.limits.redisCommandTimeoutMs },
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
  // Conversation history holds what callers and models wrote, as payloads do: kept as long.
  retain(new ConversationStore(storage.db), 'agent conversation messages');

  metrics.watch({ logQueueDepth: () => writer.depth, limiter: () => limits.state() });
  return { logs: { store, writer }, limits, metrics };
}
