import type { Logger } from 'pino';
import { queuedRequestOf, withoutPayloads, type FinishedRequest, type QueuedRequest } from './log-entry.js';
import type { RefusedLogRow } from './log-insert.js';

export interface LogWriterOptions {
  /** Rows waiting to be written; past it new rows are dropped (and counted). */
  queueSize: number;
  batchSize: number;
  /** Longest time a row waits before its batch is written. */
  flushIntervalMs: number;
  /**
   * Characters of payload, detail and media text the queue may hold (none: no bound beyond
   * queueSize). Past it, payloads are shed (oldest queued first) before any record is dropped.
   */
  queueMaxBytes?: number;
  /** false: request and response payloads are not kept (config logs.payloads); default true. */
  payloads?: boolean;
}

/** Where batches go (the writer's thread): one transaction per batch. */
export interface LogSink {
  /** Resolves with the records the database refused (left out for good); rejects when nothing was written. */
  insertBatch(records: readonly QueuedRequest[]): Promise<readonly RefusedLogRow[]>;
  /** Releases what the sink holds (its thread, its connection), after the last batch. */
  close?(): Promise<void>;
}

/** What the writer reports to metrics. */
export interface LogWriterEvents {
  rowsDropped(count: number): void;
  payloadsShed(count: number): void;
  rowsRefused(count: number): void;
  batchWritten(rows: number, seconds: number): void;
  batchFailed(): void;
}

const MAX_RETRY_DELAY_MS = 5_000;
/** What a record takes in the queue beside its payload, detail and media text (its other fields), counted toward queueMaxBytes. */
const RECORD_OVERHEAD_BYTES = 512;

function queuedBytes(queued: QueuedRequest): number {
  return RECORD_OVERHEAD_BYTES + queued.characters;
}

function hasPayloads({ record }: QueuedRequest): boolean {
  return record.requestPayload !== null || record.requestPayloadJson !== undefined || record.responsePayload !== null || record.responsePayloadJson !== undefined;
}

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
  private queue: QueuedRequest[] = [];
  /** queuedBytes of every queued row. */
  private bytes = 0;
  /** Queued rows before this index have no payloads left to shed. */
  private shedFrom = 0;
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

  /** Queued rows' payload, detail and media text, in characters (the metrics' queue bytes). */
  get queuedBytes(): number {
    return this.bytes;
  }

  /**
   * Queues a finished request's record; false when the queue is full and it was dropped.
   * Takes a copy of the record's data (queuedRequestOf) and nothing else: redaction, the row
   * and its compression are the thread's. Past the byte bound, payloads are shed first: the
   * queued records' from the oldest, then this one's.
   */
  push(finished: FinishedRequest): boolean {
    if (this.queue.length >= this.options.queueSize) {
      this.dropped();
      return false;
    }
    let queued = queuedRequestOf(finished, this.options.payloads ?? true);
    if (!this.makeRoom(queuedBytes(queued)) && hasPayloads(queued)) {
      queued = withoutPayloads(queued);
      this.events.payloadsShed(1);
    }
    const size = queuedBytes(queued);
    if (!this.makeRoom(size)) {
      this.dropped();
      return false;
    }
    this.queue.push(queued);
    this.bytes += size;
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

  /**
   * Stops the timer and writes every queued record; retries a failing database a few times.
   * Then closes the sink (the writer's thread ends once its connection is closed).
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (let attempt = 1; attempt <= SHUTDOWN_ATTEMPTS && this.queue.length + (this.writing === undefined ? 0 : 1) > 0; attempt += 1) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, Math.min((attempt - 1) * 500, MAX_RETRY_DELAY_MS)));
      await this.flush();
    }
    if (this.queue.length > 0) this.logger.error({ lost: this.queue.length }, 'request log rows could not be written before shutdown');
    await this.sink.close?.();
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
    for (const row of batch) this.bytes -= queuedBytes(row);
    this.shedFrom = Math.max(0, this.shedFrom - batch.length);
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined;
      this.afterWrite();
    });
    return this.writing;
  }

  private async write(batch: QueuedRequest[]): Promise<void> {
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
  private requeue(batch: QueuedRequest[]): void {
    const room = Math.max(0, this.options.queueSize - this.queue.length);
    const kept = batch.slice(batch.length - Math.min(room, batch.length));
    if (kept.length < batch.length) this.dropped(batch.length - kept.length);
    this.queue = [...kept, ...this.queue];
    for (const row of kept) this.bytes += queuedBytes(row);
    this.shedFrom = 0;
    this.makeRoom(0);
  }

  /**
   * Sheds the payloads of queued rows, oldest first, until `size` more fits in the byte
   * bound; false when it still does not (every queued payload is shed).
   */
  private makeRoom(size: number): boolean {
    const limit = this.options.queueMaxBytes ?? Number.POSITIVE_INFINITY;
    let shedCount = 0;
    while (this.bytes + size > limit && this.shedFrom < this.queue.length) {
      const row = this.queue[this.shedFrom]!;
      if (hasPayloads(row)) {
        const kept = withoutPayloads(row);
        this.bytes += queuedBytes(kept) - queuedBytes(row);
        this.queue[this.shedFrom] = kept;
        shedCount += 1;
      }
      this.shedFrom += 1;
    }
    if (shedCount > 0) this.events.payloadsShed(shedCount);
    return this.bytes + size <= limit;
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
