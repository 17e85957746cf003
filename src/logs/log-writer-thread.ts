import { MessageChannel, Worker, type MessagePort, type ResourceLimits } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { QueuedRequest } from './log-entry.js';
import type { RefusedLogRow } from './log-insert.js';
import type { LogSink } from './log-writer.js';
import type { LogThreadData, LogThreadReply, LogThreadRequest } from './log-thread-messages.js';

export interface LogThreadOptions extends LogThreadData {
  /** The thread's heap limits (default: Node's for a worker). */
  resourceLimits?: ResourceLimits;
  /** The thread's script (default: the request log's own, log-writer-worker): another answers the same messages. */
  entry?: URL;
}

/** What the thread reports to metrics. */
export interface LogThreadEvents {
  threadRestarted(): void;
}

/** The thread ended (crashed, ran out of memory, was terminated) before it answered. */
class ThreadStopped extends Error {}

/** How long a closing thread may take to close its connection before it is terminated. */
const CLOSE_TIMEOUT_MS = 5_000;

/** A started writer: where batches are posted, and how it ends. */
interface Thread {
  readonly port: Worker | MessagePort;
  /** Called once when it ended without being closed: the reason, and the error it stopped on. */
  onStop(listener: (reason: string, error: Error | undefined) => void): void;
  terminate(): void;
}

function workerThread(worker: Worker): Thread {
  let crash: Error | undefined;
  worker.on('error', (error) => (crash = error));
  return {
    port: worker,
    onStop: (listener) => worker.once('exit', (code) => listener(crash?.message ?? `exit code ${code}`, crash)),
    terminate: () => void worker.terminate(),
  };
}

/**
 * The writer's thread: the built entry on a worker thread. Run from the TypeScript source (the
 * tests, under tsx), where a worker would load every module through tsx again (seconds per
 * gateway), the same entry serves a message channel on this thread instead, so the records
 * still cross a structured clone; test/logs-writer-thread.test.ts runs a real thread (`entry`).
 */
async function startThread({ resourceLimits, entry, ...data }: LogThreadOptions): Promise<Thread> {
  const options = { workerData: data, ...(resourceLimits === undefined ? {} : { resourceLimits }) };
  if (entry !== undefined) return workerThread(new Worker(entry, options));
  if (!import.meta.url.endsWith('.ts')) return workerThread(new Worker(new URL('./log-writer-worker.js', import.meta.url), options));
  const { serveLogWrites } = await import('./log-writer-worker.js');
  const { port1, port2 } = new MessageChannel();
  serveLogWrites(port2, data);
  return { port: port1, onStop: (listener) => port1.once('close', () => listener('its channel closed', undefined)), terminate: () => port1.close() };
}

/** The failure the thread reported for a batch, as an error the writer logs and retries. */
function writeFailure(reply: Extract<LogThreadReply, { type: 'failed' }>): Error {
  return Object.assign(new Error(reply.message), reply.code === undefined ? {} : { code: reply.code });
}

/** Said in place of payloads nested too deeply for any copy to the thread (a hostile body, a provider's). */
export const PAYLOAD_TOO_DEEP = '[left out: nested too deeply to store]';

const throughJson = <T>(value: T): T => JSON.parse(JSON.stringify(value, (_name, member: unknown) => (typeof member === 'bigint' ? member.toString() : member))) as T;

/**
 * The record itself when a structured clone can copy it; otherwise (a payload holding a
 * function or a class instance with private state) a copy through JSON, which keeps what the
 * row would have kept: the stored payload is its JSON anyway. A payload nested too deeply for
 * either is left out, said in its place, and the rest of the record kept; undefined when even
 * that cannot be copied (the record is then refused, never the batch held back).
 */
function cloneable(request: QueuedRequest): QueuedRequest | undefined {
  try {
    structuredClone(request);
    return request;
  } catch {
    // Copied another way below.
  }
  try {
    return throughJson(request);
  } catch {
    // Too deep for JSON too: without its payloads.
  }
  try {
    const { responsePayloadJson: _json, requestPayloadJson: _bytes, ...record } = request.record;
    return throughJson({ ...request, record: { ...record, requestPayload: PAYLOAD_TOO_DEEP, responsePayload: PAYLOAD_TOO_DEEP } });
  } catch {
    return undefined;
  }
}

/** Bodies from this size are lent to the thread in a buffer of the pool (LentBuffers); smaller ones are cloned. */
const LENT_MIN_BYTES = 64 * 1024;
/** Bodies above this size are cloned: the pool keeps no buffer so large. */
const LENT_MAX_BYTES = 16 * 1024 * 1024;
/** The most the pool keeps of buffers back from the thread: what a burst of images needs, not more. */
const LENT_POOL_BYTES = 16 * 1024 * 1024;

/** The size of the pooled buffer a body is lent in (a power of two), or 0 for a body not lent. */
function lentSizeOf(bytes: Uint8Array | undefined): number {
  if (bytes === undefined || bytes.byteLength < LENT_MIN_BYTES || bytes.byteLength > LENT_MAX_BYTES) return 0;
  return 2 ** Math.ceil(Math.log2(bytes.byteLength));
}

/**
 * A batch in runs whose lent bodies fit the pool together (a run has one record at least),
 * posted one after another: a run's buffers are back before the next is copied, so a batch of
 * images reuses the pool's buffers where all at once it took new memory for what did not fit,
 * every page of it a fault. A batch without large bodies is one run.
 */
function runsWithinPool(records: readonly QueuedRequest[]): (readonly QueuedRequest[])[] {
  const runs: (readonly QueuedRequest[])[] = [];
  let start = 0;
  let lentBytes = 0;
  records.forEach((request, index) => {
    const size = lentSizeOf(request.record.requestPayloadJson);
    if (index > start && lentBytes + size > LENT_POOL_BYTES) {
      runs.push(records.slice(start, index));
      start = index;
      lentBytes = 0;
    }
    lentBytes += size;
  });
  runs.push(start === 0 ? records : records.slice(start));
  return runs;
}

/**
 * Buffers a batch's large request bodies are copied into and moved (transferred) to the
 * thread, which hands them back with its answer. A structured clone copied each body twice,
 * into the message and out of it on the thread, each time into memory mapped afresh, whose
 * every page faulted (~350 faults for an image of 1 MiB). The writer keeps its records, and
 * their bytes, until the batch is answered, so a batch written again is copied again; the
 * body itself is never moved, as a pass-through body may still be on its way upstream.
 */
export class LentBuffers {
  /** Free buffers by size, each a power of two. */
  private readonly free = new Map<number, ArrayBuffer[]>();
  private freeBytes = 0;

  /** A buffer holding a copy of `bytes`, or undefined for a body of a size not lent. */
  lend(bytes: Uint8Array): Uint8Array | undefined {
    const size = lentSizeOf(bytes);
    if (size === 0) return undefined;
    const pooled = this.free.get(size)?.pop();
    if (pooled !== undefined) this.freeBytes -= size;
    const copy = new Uint8Array(pooled ?? new ArrayBuffer(size), 0, bytes.byteLength);
    copy.set(bytes);
    return copy;
  }

  /** A buffer back from the thread (or never sent): kept for another body while the pool has room. */
  giveBack(buffer: ArrayBuffer): void {
    const size = buffer.byteLength;
    if (size < LENT_MIN_BYTES || size > LENT_MAX_BYTES || (size & (size - 1)) !== 0 || this.freeBytes + size > LENT_POOL_BYTES) return;
    const sized = this.free.get(size);
    if (sized === undefined) this.free.set(size, [buffer]);
    else sized.push(buffer);
    this.freeBytes += size;
  }

  /** Bytes kept for reuse. */
  get pooledBytes(): number {
    return this.freeBytes;
  }
}

interface PendingWrite {
  resolve(refused: RefusedLogRow[]): void;
  reject(error: Error): void;
}

/**
 * The request log's sink on a worker thread, as pino's transports are: the event loop hands
 * over batches of queued records (structured clones: plain data and strings) and the thread
 * turns them into rows (redaction, payload compression) and writes them through a database
 * connection of its own. The thread is started with the first batch.
 *
 * A thread that stops without answering (an uncaught error, out of memory) is reported and
 * replaced: its batch is written again by a new thread (a record the old one committed is
 * kept once: the insert leaves out ids already stored). A batch that stops the new thread too
 * is written one record at a time, and only a record that stops a thread on its own is left
 * out (returned as refused, with its request id).
 */
export class LogWriterThread implements LogSink {
  private worker: Promise<Thread> | undefined;
  private readonly pending = new Map<number, PendingWrite>();
  private readonly lentBuffers = new LentBuffers();
  private nextId = 1;
  /** Set by close: a batch written after it (a request that ended during shutdown) has its thread closed again. */
  private closed = false;

  constructor(
    private readonly options: LogThreadOptions,
    private readonly logger: Logger,
    private readonly events: LogThreadEvents,
  ) {}

  async insertBatch(records: readonly QueuedRequest[]): Promise<RefusedLogRow[]> {
    try {
      const refused: RefusedLogRow[] = [];
      for (const run of runsWithinPool(records)) refused.push(...(await this.insertOnThread(run)));
      return refused;
    } finally {
      if (this.closed && this.pending.size === 0) await this.close();
    }
  }

  private async insertOnThread(records: readonly QueuedRequest[]): Promise<RefusedLogRow[]> {
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      try {
        return await this.write(records);
      } catch (error) {
        if (!(error instanceof ThreadStopped)) throw error;
        if (attempt === 2 && records.length === 1) {
          return [{ requestId: records[0]!.record.requestId, reason: `writing it stopped the writer's thread twice: ${error.message}` }];
        }
      }
    }
    const refused: RefusedLogRow[] = [];
    for (const record of records) refused.push(...(await this.insertOnThread([record])));
    return refused;
  }

  /** Ends the thread once it has closed its connection (after the writer's last batch). */
  async close(): Promise<void> {
    this.closed = true;
    const starting = this.worker;
    if (starting === undefined) return;
    this.worker = undefined;
    const thread = await starting;
    const ended = new Promise((resolve) => (thread.port instanceof Worker ? thread.port.once('exit', resolve) : thread.port.once('close', resolve)));
    thread.port.ref();
    thread.port.postMessage({ type: 'close' } satisfies LogThreadRequest);
    const timer = setTimeout(() => thread.terminate(), CLOSE_TIMEOUT_MS);
    await ended;
    clearTimeout(timer);
  }

  private async write(records: readonly QueuedRequest[]): Promise<RefusedLogRow[]> {
    const worker = (await this.thread()).port;
    const id = this.nextId++;
    const uncopyable: RefusedLogRow[] = [];
    const written = await new Promise<RefusedLogRow[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Held while a batch is out, so a shutdown waiting for it is not cut short by an empty loop.
      worker.ref();
      const lent: ArrayBuffer[] = [];
      try {
        worker.postMessage({ type: 'write', id, records: this.withLentBodies(records, lent) } satisfies LogThreadRequest, lent);
        return;
      } catch {
        // A record a structured clone cannot copy: each is copied as it can be.
        for (const buffer of lent) if (buffer.byteLength > 0) this.lentBuffers.giveBack(buffer);
      }
      const copies: QueuedRequest[] = [];
      for (const record of records) {
        const copy = cloneable(record);
        if (copy !== undefined) copies.push(copy);
        else uncopyable.push({ requestId: record.record.requestId, reason: 'its record could not be copied to the writer thread' });
      }
      try {
        worker.postMessage({ type: 'write', id, records: copies } satisfies LogThreadRequest);
      } catch (error) {
        this.pending.delete(id);
        if (this.pending.size === 0) worker.unref();
        reject(error as Error);
      }
    });
    return [...uncopyable, ...written];
  }

  /** The records, each large body as a copy in a lent buffer (its buffer added to `lent`). */
  private withLentBodies(records: readonly QueuedRequest[], lent: ArrayBuffer[]): readonly QueuedRequest[] {
    let copies: QueuedRequest[] | undefined;
    records.forEach((request, index) => {
      const bytes = request.record.requestPayloadJson;
      const copy = bytes === undefined ? undefined : this.lentBuffers.lend(bytes);
      if (copy === undefined) {
        copies?.push(request);
        return;
      }
      lent.push(copy.buffer as ArrayBuffer);
      copies ??= records.slice(0, index);
      copies.push({ ...request, record: { ...request.record, requestPayloadJson: copy } });
    });
    return copies ?? records;
  }

  private thread(): Promise<Thread> {
    if (this.worker !== undefined) return this.worker;
    const starting = startThread(this.options).then((thread) => {
      thread.port.unref();
      thread.port.on('message', (reply: LogThreadReply) => this.answered(thread.port, reply));
      thread.onStop((reason, error) => {
        if (this.worker !== starting) return; // closed
        this.worker = undefined;
        this.events.threadRestarted();
        this.logger.error({ err: error, reason, batches: this.pending.size }, "the request log's writer thread stopped; a new one writes its batch again");
        const stopped = new ThreadStopped(reason);
        const pending = [...this.pending.values()];
        this.pending.clear();
        for (const write of pending) write.reject(stopped);
      });
      return thread;
    });
    this.worker = starting;
    return starting;
  }

  private answered(worker: Worker | MessagePort, reply: LogThreadReply): void {
    if (reply.type === 'connection-failed') {
      this.logger.warn({ reason: reply.message }, "a database connection of the request log's writer failed; its write fails and is retried");
      return;
    }
    for (const buffer of reply.lent ?? []) this.lentBuffers.giveBack(buffer);
    const write = this.pending.get(reply.id);
    if (write === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) worker.unref();
    if (reply.type === 'written') write.resolve(reply.refused);
    else write.reject(writeFailure(reply));
  }
}
