import type { Logger } from 'pino';
import type { RequestLogRow } from './log-entry.js';
import type { RefusedLogRow } from './log-store.js';

export interface LogWriterOptions {
  /** Rows waiting to be written; past it new rows are dropped (and counted). */
  queueSize: number;
  batchSize: number;
  /** Longest time a row waits before its batch is written. */
  flushIntervalMs: number;
}

/** Where batches go: one transaction per batch. */
export interface LogSink {
  /** Resolves with the rows the database refused (left out for good); rejects when nothing was written. */
  insertBatch(rows: readonly RequestLogRow[]): Promise<readonly RefusedLogRow[]>;
}

/** What the writer reports to metrics. */
export interface LogWriterEvents {
  rowsDropped(count: number): void;
  rowsRefused(count: number): void;
  batchWritten(rows: number, seconds: number): void;
  batchFailed(): void;
}

const MAX_RETRY_DELAY_MS = 5_000;
const DROP_WARNING_INTERVAL_MS = 10_000;
/** Attempts of the final flush at shutdown before the remaining rows are given up (and logged). */
const SHUTDOWN_ATTEMPTS = 3;

/**
 * A bounded queue between the response path and the database. `push` never waits: rows
 * are written in batches by a timer (or as soon as a batch is full), one batch at a time.
 * A failed batch goes back to the front of the queue and is retried with a growing delay;
 * `close` writes everything that is queued.
 */
export class LogWriter {
  private queue: RequestLogRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private failures = 0;
  private droppedSinceWarning = 0;
  private lastDropWarningAt = 0;
  private closed = false;

  constructor(
    private readonly sink: LogSink,
    private readonly options: LogWriterOptions,
    private readonly logger: Logger,
    private readonly events: LogWriterEvents,
  ) {}

  /** Rows waiting to be written (the metrics' queue depth). */
  get depth(): number {
    return this.queue.length;
  }

  /** Queues a row; false when the queue is full and the row was dropped. */
  push(row: RequestLogRow): boolean {
    if (this.queue.length >= this.options.queueSize) {
      this.dropped();
      return false;
    }
    this.queue.push(row);
    if (this.closed) {
      // A request that ended after shutdown began: write it straight away.
      void this.writeNext();
    } else if (this.queue.length >= this.options.batchSize && this.failures === 0) {
      // A full batch goes at once; after a failed write the back-off's timer decides.
      this.schedule(0);
    } else {
      this.schedule(this.options.flushIntervalMs);
    }
    return true;
  }

  /** Writes until the queue is empty (or a batch fails). */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.writing !== undefined) {
      const failuresBefore = this.failures;
      await (this.writing ?? this.writeNext());
      if (this.failures > failuresBefore) return;
    }
  }

  /** Stops the timer and writes every queued row; retries a failing database a few times. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (let attempt = 1; attempt <= SHUTDOWN_ATTEMPTS; attempt += 1) {
      await this.flush();
      if (this.queue.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt * 500, MAX_RETRY_DELAY_MS)));
    }
    this.logger.error({ lost: this.queue.length }, 'request log rows could not be written before shutdown');
  }

  private schedule(delayMs: number): void {
    if (this.writing !== undefined) return; // the running write reschedules when it ends
    if (this.timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.writeNext();
    }, delayMs);
    this.timer.unref();
  }

  private writeNext(): Promise<void> {
    if (this.writing !== undefined) return this.writing;
    if (this.queue.length === 0) return Promise.resolve();
    const batch = this.queue.splice(0, this.options.batchSize);
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
      this.afterWrite();
    });
    return this.writing;
  }

  private async write(batch: RequestLogRow[]): Promise<void> {
    const startedAt = performance.now();
    try {
      const refused = await this.sink.insertBatch(batch);
      this.failures = 0;
      this.events.batchWritten(batch.length - refused.length, (performance.now() - startedAt) / 1000);
      if (refused.length > 0) {
        this.events.rowsRefused(refused.length);
        this.logger.error({ refused }, 'the database refused request log records; they were left out and the rest written');
      }
    } catch (error) {
      this.failures += 1;
      this.events.batchFailed();
      this.logger.error({ err: error, rows: batch.length }, 'writing request log rows failed; will retry');
      this.requeue(batch);
    }
  }

  /** Plans the next write: at once for a full batch, after the interval (or a back-off) otherwise. */
  private afterWrite(): void {
    if (this.queue.length === 0) return;
    if (this.closed) {
      // After shutdown began, close() drives the retries; only late rows are written here.
      if (this.failures === 0) void this.writeNext();
      return;
    }
    const backoff = this.failures === 0 ? 0 : Math.min(this.options.flushIntervalMs * 2 ** this.failures, MAX_RETRY_DELAY_MS);
    this.schedule(this.queue.length >= this.options.batchSize ? backoff : Math.max(backoff, this.options.flushIntervalMs));
  }

  /** Puts a failed batch back in front, dropping the oldest rows that no longer fit. */
  private requeue(batch: RequestLogRow[]): void {
    const room = Math.max(0, this.options.queueSize - this.queue.length);
    const kept = batch.slice(batch.length - Math.min(room, batch.length));
    if (kept.length < batch.length) this.dropped(batch.length - kept.length);
    this.queue = [...kept, ...this.queue];
  }

  private dropped(count = 1): void {
    this.events.rowsDropped(count);
    this.droppedSinceWarning += count;
    const now = Date.now();
    if (now - this.lastDropWarningAt >= DROP_WARNING_INTERVAL_MS) {
      this.logger.warn(
        { dropped: this.droppedSinceWarning, queueSize: this.options.queueSize },
        'request log queue is full; records are being dropped (raise logs.queueSize or check the database)',
      );
      this.lastDropWarningAt = now;
      this.droppedSinceWarning = 0;
    }
  }
}
