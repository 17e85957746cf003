import { describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { LogWriter, type FinishedRequest, type LogSink, type QueuedRequest, type RefusedLogRow, type RequestRecord } from '../src/logs/index.js';

const silent = pino({ level: 'silent' });

function row(id: number, payloads: Partial<Pick<RequestRecord, 'requestPayload' | 'responsePayload' | 'responsePayloadJson'>> = {}): FinishedRequest {
  const record = { requestId: `r${id}`, startedAt: id, endpoint: '/v1/chat/completions', requestPayload: null, responsePayload: null, logDetail: null, media: null, ...payloads };
  return { record: record as FinishedRequest['record'], caller: { keyId: null, projectId: null, fingerprint: null }, status: 200, latencyMs: 1, cost: { microUsd: null, startingPrice: false } };
}

/** A sink that records batches; `gate` holds writes until released, `failures` makes the next writes throw. */
class RecordingSink implements LogSink {
  readonly batches: string[][] = [];
  failures = 0;
  /** Ids of rows the database refuses (written without them, as LogStore does). */
  readonly refusing = new Set<string>();
  /** Resolves when a write has started. */
  started: Promise<void>;
  private markStarted!: () => void;
  private release: (() => void) | undefined;
  private gate: Promise<void> | undefined;

  constructor() {
    this.started = new Promise((resolve) => (this.markStarted = resolve));
  }

  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release?.();
    this.gate = undefined;
  }

  /** Writes begun, failed ones included. */
  attempts = 0;

  async insertBatch(records: readonly QueuedRequest[]): Promise<RefusedLogRow[]> {
    const rows = records.map((queued) => ({ request_id: queued.record.requestId }));
    this.attempts += 1;
    this.markStarted();
    await this.gate;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('database unavailable');
    }
    const refused = rows.filter((r) => this.refusing.has(r.request_id));
    this.batches.push(rows.filter((r) => !refused.includes(r)).map((r) => r.request_id));
    return refused.map((r) => ({ requestId: r.request_id, reason: 'invalid byte sequence for encoding "UTF8": 0x00' }));
  }

  get written(): string[] {
    return this.batches.flat();
  }
}

function counters() {
  const counts = { dropped: 0, shed: 0, refused: 0, written: 0, failed: 0 };
  return {
    counts,
    events: {
      rowsDropped: (count: number) => (counts.dropped += count),
      payloadsShed: (count: number) => (counts.shed += count),
      rowsRefused: (count: number) => (counts.refused += count),
      batchWritten: (rows: number) => (counts.written += rows),
      batchFailed: () => (counts.failed += 1),
    },
  };
}

describe('request log writer', () => {
  test('writes in batches of batchSize, and close() writes the partial batch left in the queue', async () => {
    const sink = new RecordingSink();
    const { counts, events } = counters();
    const writer = new LogWriter(sink, { queueSize: 100, batchSize: 10, flushIntervalMs: 60_000 }, silent, events);
    for (let i = 0; i < 25; i += 1) assert.equal(writer.push(row(i)), true);
    await writer.close();
    assert.deepEqual(sink.batches.map((batch) => batch.length), [10, 10, 5]);
    assert.deepEqual(sink.written, Array.from({ length: 25 }, (_, i) => `r${i}`));
    assert.equal(counts.written, 25);
    assert.equal(writer.depth, 0);
  });

  test('the queue is bounded: past queueSize rows are dropped and counted, never buffered without limit', async () => {
    const sink = new RecordingSink();
    sink.hold();
    const { counts, events } = counters();
    const writer = new LogWriter(sink, { queueSize: 5, batchSize: 2, flushIntervalMs: 60_000 }, silent, events);
    writer.push(row(0));
    writer.push(row(1));
    await sink.started;
    const accepted = Array.from({ length: 18 }, (_, i) => writer.push(row(i + 2))).filter(Boolean).length;
    // One batch of 2 is being written (held), 5 wait in the queue; the other 13 are dropped.
    assert.equal(accepted, 5);
    assert.equal(counts.dropped, 13);
    assert.equal(writer.depth, 5);
    sink.open();
    await writer.close();
    assert.equal(sink.written.length, 7);
  });

  test('a failed batch goes back to the queue and is written by a later attempt', async () => {
    const sink = new RecordingSink();
    sink.failures = 2;
    const { counts, events } = counters();
    const writer = new LogWriter(sink, { queueSize: 100, batchSize: 3, flushIntervalMs: 60_000 }, silent, events);
    for (let i = 0; i < 3; i += 1) writer.push(row(i));
    await writer.close();
    assert.deepEqual(sink.written, ['r0', 'r1', 'r2']);
    assert.equal(counts.failed, 2);
  });

  test('while the database fails, new records wait for the back-off instead of retrying at once', async () => {
    // Every record that filled a batch used to retry at once: a database that was down got a
    // write per request instead of one per growing delay.
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const sink = new RecordingSink();
      sink.failures = 1;
      const writer = new LogWriter(sink, { queueSize: 100, batchSize: 3, flushIntervalMs: 1_000 }, silent, counters().events);
      const settled = () => new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 3; i += 1) writer.push(row(i));
      mock.timers.tick(0);
      await settled();
      assert.equal(sink.attempts, 1);
      for (let i = 3; i < 9; i += 1) writer.push(row(i));
      mock.timers.tick(0);
      await settled();
      assert.equal(sink.attempts, 1, 'a full batch retried before the back-off (2 × flushIntervalMs) ended');
      mock.timers.tick(2_000);
      await settled();
      assert.equal(sink.attempts, 2);
      await writer.close();
      assert.deepEqual(sink.written, Array.from({ length: 9 }, (_, i) => `r${i}`));
    } finally {
      mock.timers.reset();
    }
  });

  test('rows the database refused are counted and logged once, not retried, and the rows after them are written', async () => {
    const sink = new RecordingSink();
    sink.refusing.add('r1');
    const { counts, events } = counters();
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const writer = new LogWriter(sink, { queueSize: 100, batchSize: 3, flushIntervalMs: 60_000 }, logger, events);
    for (let i = 0; i < 6; i += 1) writer.push(row(i));
    await writer.close();
    assert.deepEqual(sink.written, ['r0', 'r2', 'r3', 'r4', 'r5']);
    assert.deepEqual({ refused: counts.refused, written: counts.written, failed: counts.failed }, { refused: 1, written: 5, failed: 0 });
    assert.equal(lines.length, 1);
    assert.deepEqual(JSON.parse(lines[0]!).refused, [{ requestId: 'r1', reason: 'invalid byte sequence for encoding "UTF8": 0x00' }]);
  });

  test('a record pushed after close() began is still written', async () => {
    const sink = new RecordingSink();
    const { events } = counters();
    const writer = new LogWriter(sink, { queueSize: 100, batchSize: 10, flushIntervalMs: 60_000 }, silent, events);
    writer.push(row(1));
    await writer.close();
    writer.push(row(2));
    await writer.flush();
    assert.deepEqual(sink.written, ['r1', 'r2']);
  });

  test('the queue is bounded by bytes too: payloads are shed, oldest first and marked, before any record is dropped', async () => {
    const stored: QueuedRequest[] = [];
    let down = true;
    const sink: LogSink = {
      insertBatch: async (rows) => {
        if (down) throw new Error('database unavailable');
        stored.push(...rows);
        return [];
      },
    };
    const { counts, events } = counters();
    // Records of ~10 KB each while the database is down; the queue may hold 50 KB of text.
    const writer = new LogWriter(sink, { queueSize: 1000, batchSize: 1000, flushIntervalMs: 60_000, queueMaxBytes: 50_000 }, silent, events);
    const big = (id: number) => row(id, { requestPayload: { text: 'x'.repeat(10_000) }, responsePayloadJson: '{"ok":true}' });
    for (let i = 0; i < 60; i += 1) {
      assert.equal(writer.push(big(i)), true, `record ${i} is kept`);
      assert.ok(writer.queuedBytes <= 50_000, `${writer.queuedBytes} queued after record ${i}`);
    }
    assert.equal(writer.depth, 60);
    assert.equal(counts.dropped, 0);
    assert.ok(counts.shed >= 55, `${counts.shed} payloads shed`);
    // Only when no payload is left to shed are records dropped.
    for (let i = 60; i < 200; i += 1) writer.push(big(i));
    assert.ok(counts.dropped > 0);
    assert.ok(writer.queuedBytes <= 50_000);
    down = false;
    await writer.close();
    assert.equal(stored.length, 200 - counts.dropped);
    const keptPayloads = stored.filter((written) => written.record.requestPayload !== null);
    assert.ok(keptPayloads.length <= 4, 'at most what fits keeps its payloads');
    for (const written of stored) {
      if (written.record.requestPayload === null) {
        assert.equal(written.payloadsOmitted, 'queue_bytes');
        assert.equal(written.record.responsePayload, null);
        assert.equal(written.record.responsePayloadJson, undefined);
      } else {
        assert.equal(written.payloadsOmitted, null);
        assert.equal(written.record.responsePayloadJson, '{"ok":true}');
      }
    }
    // The oldest were shed first: what kept its payloads came last.
    const firstKept = stored.findIndex((written) => written.record.requestPayload !== null);
    assert.ok(firstKept === -1 || stored.slice(firstKept).every((written) => written.record.requestPayload !== null));
  });
});
