import type { Logger } from 'pino';
import type { LogStoreSize } from './log-store.js';
import { PeriodicTask } from './periodic-task.js';

export interface SizeCapStore {
  readonly kind: 'sqlite' | 'postgres';
  readonly recordOverheadBytes: number;
  size(): Promise<LogStoreSize>;
  dropOldestPayloads(batchSize: number): Promise<number>;
  deleteOldestRecords(batchSize: number): Promise<number>;
  reclaimFreePages(maxPages: number): boolean;
  reclaimsFreePages(): boolean;
}

export interface SizeCapOptions {
  /** Largest size of the log, in bytes (its records' payloads plus recordOverheadBytes each); 0 = no cap. */
  maxBytes: number;
  /** Records per statement. */
  batchSize: number;
  /** Time between runs (the first comes after one interval). */
  intervalMs: number;
}

export const SIZE_CAP_DEFAULTS = { batchSize: 1000, intervalMs: 60_000 } as const;

/** Free pages given back per step (4 MiB of the default 4 KiB pages): each step is one short write on the event loop. */
const RECLAIM_PAGES_PER_STEP = 1024;

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Keeps the request log under its size cap and measures it. Past the cap the oldest
 * records' payloads are dropped first (the records stay, marked), and only when no payload
 * is left are the oldest records deleted. On SQLite the pages freed here and by retention go
 * back to the file system. Several instances may run it at once: each batch acts on what is
 * still there.
 */
export class SizeCapJob {
  private readonly task = new PeriodicTask(() => this.enforce());
  private measured: LogStoreSize | null = null;

  constructor(
    private readonly store: SizeCapStore,
    private readonly options: SizeCapOptions,
    private readonly logger: Logger,
  ) {}

  /** The size at the end of the last run (metrics); null before the first. */
  get latest(): LogStoreSize | null {
    return this.measured;
  }

  /** Runs at once (a first measure), then every interval. */
  start(): void {
    if (this.store.kind === 'sqlite' && !this.store.reclaimsFreePages()) {
      this.logger.warn(
        "this SQLite database was created before the request log gave freed pages back, so its file never shrinks: stop the gateway and run once `sqlite3 modelgate.db 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'` in the data dir (docs/logging.md)",
      );
    }
    this.task.start(0, this.options.intervalMs);
  }

  /** One pass: enforces the cap, gives free pages back, measures. */
  runOnce(): Promise<void> {
    return this.task.run();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Log size as the cap counts it. */
  private counted(size: LogStoreSize): number {
    return size.payloadBytes + size.records * this.store.recordOverheadBytes;
  }

  private async enforce(): Promise<void> {
    try {
      const { maxBytes, batchSize } = this.options;
      let size = await this.store.size();
      // Payloads first: records stay while any payload can go.
      const steps = [
        { name: 'payloadsDropped', run: () => this.store.dropOldestPayloads(batchSize) },
        { name: 'recordsDeleted', run: () => this.store.deleteOldestRecords(batchSize) },
      ];
      const done: Record<string, number> = {};
      for (const step of steps) {
        while (maxBytes > 0 && this.counted(size) > maxBytes && !this.task.stopping) {
          const count = await step.run();
          if (count === 0) break;
          done[step.name] = (done[step.name] ?? 0) + count;
          size = await this.store.size();
          await nextTurn();
        }
      }
      if (Object.keys(done).length > 0) this.logger.info({ ...done, maxBytes }, 'request log over its size cap: oldest payloads dropped, then oldest records');
      while (this.store.reclaimFreePages(RECLAIM_PAGES_PER_STEP) && !this.task.stopping) await nextTurn();
      this.measured = await this.store.size();
    } catch (error) {
      this.logger.error({ err: error }, 'enforcing the request log size cap failed; the next run retries');
    }
  }
}
