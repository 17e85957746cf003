import type { Logger } from 'pino';

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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopping = false;

  constructor(
    private readonly store: RetentionStore,
    private readonly options: RetentionOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.options.retentionDays === 0) return;
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        void this.runOnce().finally(() => {
          if (!this.stopping) tick(this.options.intervalMs);
        });
      }, delay);
      this.timer.unref();
    };
    tick(this.options.firstRunDelayMs);
  }

  /** One pass: deletes batch after batch until no expired row is left; returns the count. */
  runOnce(now: number = Date.now()): Promise<number> {
    this.running ??= this.deleteExpired(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private get rows(): string {
    return this.options.rows ?? 'request log rows';
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async deleteExpired(now: number): Promise<number> {
    if (this.options.retentionDays === 0) return 0;
    const cutoff = now - this.options.retentionDays * DAY_MS;
    let total = 0;
    try {
      for (;;) {
        const deleted = await this.store.deleteOlderThan(cutoff, this.options.batchSize);
        total += deleted;
        if (deleted < this.options.batchSize || this.stopping) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      this.logger.error({ err: error }, `deleting expired ${this.rows} failed; the next run retries`);
    }
    if (total > 0) this.logger.info({ deleted: total, retentionDays: this.options.retentionDays }, `expired ${this.rows} deleted`);
    return total;
  }
}
