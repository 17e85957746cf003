import type { Logger } from 'pino';
import { PeriodicTask } from './periodic-task.js';

export interface RetentionStore {
  deleteOlderThan(cutoff: number, batchSize: number): Promise<number>;
}

export interface RetentionOptions {
  /** Records older than this many days are deleted; 0 keeps them forever. */
  retentionDays: number;
  /** Rows per DELETE statement. */
  batchSize: number;
  /** Time between runs; the first run starts after `firstRunDelayMs`. */
  intervalMs: number;
  firstRunDelayMs: number;
  /** What the rows are, for the process log (default: request log rows). */
  rows?: string;
}

export const RETENTION_DEFAULTS = { batchSize: 1000, intervalMs: 3_600_000, firstRunDelayMs: 60_000 } as const;

const DAY_MS = 86_400_000;

/**
 * Deletes expired rows (the request log's, agent history's) in the background, in bounded batches with a pause
 * between them, so a large backlog never holds a long lock or blocks the event loop.
 * Several instances may run it at once: each batch deletes what is still there.
 */
export class RetentionJob {
  private readonly task = new PeriodicTask(() => this.deleteExpired(Date.now()));

  constructor(
    private readonly store: RetentionStore,
    private readonly options: RetentionOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.options.retentionDays === 0) return;
    this.task.start(this.options.firstRunDelayMs, this.options.intervalMs);
  }

  /** One pass: deletes batch after batch until no expired row is left; returns the count. */
  runOnce(now: number = Date.now()): Promise<number> {
    return this.task.run(() => this.deleteExpired(now));
  }

  private get rows(): string {
    return this.options.rows ?? 'request log rows';
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  private async deleteExpired(now: number): Promise<number> {
    if (this.options.retentionDays === 0) return 0;
    const cutoff = now - this.options.retentionDays * DAY_MS;
    let total = 0;
    try {
      for (;;) {
        const deleted = await this.store.deleteOlderThan(cutoff, this.options.batchSize);
        total += deleted;
        if (deleted < this.options.batchSize || this.task.stopping) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      this.logger.error({ err: error }, `deleting expired ${this.rows} failed; the next run retries`);
    }
    if (total > 0) this.logger.info({ deleted: total, retentionDays: this.options.retentionDays }, `expired ${this.rows} deleted`);
    return total;
  }
}
