import type { Logger } from 'pino';
import type { LogStoreSize } from './log-store.js';

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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
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

  start(): void {
    if (this.store.kind === 'sqlite' && !this.store.reclaimsFreePages()) {
      this.logger.warn(
        "this SQLite database was created before the request log gave freed pages back, so its file never shrinks: stop the gateway and run once `sqlite3 modelgate.db 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'` in the data dir (docs/logging.md)",
      );
    }
    const tick = () => {
      this.timer = setTimeout(() => {
        void this.runOnce().finally(() => {
          if (!this.stopping) tick();
        });
      }, this.options.intervalMs);
      this.timer.unref();
    };
    void this.runOnce().finally(tick);
  }

  /** One pass: enforces the cap, gives free pages back, measures. */
  runOnce(): Promise<void> {
    this.running ??= this.enforce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Log size as the cap counts it. */
  private counted(size: LogStoreSize): number {
    return size.payloadBytes + size.records * this.store.recordOverheadBytes;
  }

  private async enforce(): Promise<void> {
    try {
      let size = await this.store.size();
      const { maxBytes, batchSize } = this.options;
      let dropped = 0;
      let deleted = 0;
      while (maxBytes > 0 && this.counted(size) > maxBytes && !this.stopping) {
        const payloads = await this.store.dropOldestPayloads(batchSize);
        if (payloads === 0) break;
        dropped += payloads;
        size = await this.store.size();
        await nextTurn();
      }
      while (maxBytes > 0 && this.counted(size) > maxBytes && !this.stopping) {
        const records = await this.store.deleteOldestRecords(batchSize);
        if (records === 0) break;
        deleted += records;
        size = await this.store.size();
        await nextTurn();
      }
      if (dropped > 0 || deleted > 0) {
        this.logger.info({ payloadsDropped: dropped, recordsDeleted: deleted, maxBytes }, 'request log over its size cap: oldest payloads dropped, then oldest records');
      }
      while (this.store.reclaimFreePages(RECLAIM_PAGES_PER_STEP) && !this.stopping) await nextTurn();
      this.measured = await this.store.size();
    } catch (error) {
      this.logger.error({ err: error }, 'enforcing the request log size cap failed; the next run retries');
    }
  }
}
