import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { openStorage, type Storage } from '../src/storage/index.js';
import { LogStore, LogWriter, LogWriterThread, PAYLOAD_TOO_DEEP, type FinishedRequest, type LogThreadOptions, type RequestRecord } from '../src/logs/index.js';
import { LentBuffers } from '../src/logs/log-writer-thread.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

const silent = pino({ level: 'silent' });
const ALL = { projectId: null };
const OPENAI_KEY = `sk-proj-${'a1B2c3D4e5'.repeat(4)}`;
const WRITER = { queueSize: 1000, batchSize: 100, flushIntervalMs: 60_000 };

/** A finished chat request as the request-log hook hands it over. */
function finished(id: string, overrides: Partial<RequestRecord> = {}): FinishedRequest {
  const record: RequestRecord = {
    requestId: id,
    startedAt: Date.UTC(2025, 4, 20, 12),
    endpoint: '/v1/chat/completions',
    platform: null,
    mode: 'chat',
    requestedModel: 'gpt-4o-mini',
    resolvedModel: 'gpt-4o-mini',
    provider: 'openai',
    streaming: false,
    usage: { promptTokens: 12, completionTokens: 9, totalTokens: 21, cachedPromptTokens: null },
    imageCount: null,
    audioSeconds: null,
    media: null,
    requestPayload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
    responsePayload: null,
    responsePayloadJson: '{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}',
    logDetail: null,
    errorCode: null,
    upstreamLatencyMs: 3,
    agent: null,
    extra: null,
    droppedFields: [],
    ...overrides,
  };
  return { record, caller: { keyId: 'key_a', projectId: 'alpha', fingerprint: 'key_a…1234' }, status: 200, latencyMs: 5, cost: { microUsd: 12, startingPrice: false } };
}

function counting() {
  const counts = { written: 0, refused: 0, failed: 0, restarts: 0 };
  const events = {
    rowsDropped: () => undefined,
    payloadsShed: () => undefined,
    rowsRefused: (count: number) => (counts.refused += count),
    batchWritten: (rows: number) => (counts.written += rows),
    batchFailed: () => (counts.failed += 1),
    threadRestarted: () => (counts.restarts += 1),
  };
  return { counts, events };
}

for (const backend of STORAGE_BACKENDS) {
  describe(`request log writer thread on ${backend.name}`, { skip: backend.skip }, () => {
    let shared: SharedStorage;
    let storage: Storage;
    let store: LogStore;

    before(async () => {
      shared = await backend.create();
      storage = await openStorage({ databaseUrl: shared.env.DATABASE_URL, dataDir: shared.dataDir });
      store = new LogStore(storage);
    });

    after(async () => {
      await storage.close();
      await shared.dispose();
    });

    function writerOf(options: Partial<LogThreadOptions> = {}) {
      const { counts, events } = counting();
      // A real worker thread (run from source, the writer would serve a channel on this thread).
      const entry = new URL('./fixtures/log-thread-from-source.mjs', import.meta.url);
      const thread = new LogWriterThread({ storage: storage.location, entries: { payloads: true, maxPayloadBytes: 262_144 }, entry, ...options }, silent, events);
      return { writer: new LogWriter(thread, WRITER, silent, events), counts };
    }

    test('the thread redacts, compresses and writes what the event loop handed over; close() drains it', async () => {
      const { writer, counts } = writerOf();
      const leaky = finished('thread-redacted', { requestPayload: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `my key ${OPENAI_KEY}` }] } });
      assert.equal(writer.push(leaky), true);
      assert.equal(writer.push(finished('thread-plain')), true);
      await writer.close();
      assert.equal(counts.written, 2);
      const redacted = await store.get('thread-redacted', ALL);
      const stored = redacted?.request_payload ?? '';
      assert.ok(stored.includes('[redacted]') && !stored.includes(OPENAI_KEY), stored);
      const plain = (await store.get('thread-plain', ALL))!;
      // The response's JSON text is stored as the caller was sent it.
      assert.equal(plain?.response_payload, finished('x').record.responsePayloadJson);
      assert.deepEqual(JSON.parse(plain.request_payload!), finished('x').record.requestPayload);
      assert.deepEqual({ key: plain.key_id, status: plain.status, tokens: plain.total_tokens, cost: plain.cost_micro_usd }, { key: 'key_a', status: 200, tokens: 21, cost: 12 });
    });

    test('a payload a structured clone cannot copy is written as its JSON', async () => {
      const { writer, counts } = writerOf();
      writer.push(finished('thread-function', { requestPayload: { text: 'kept', callback: () => 'not kept' } }));
      await writer.close();
      assert.deepEqual({ written: counts.written, failed: counts.failed }, { written: 1, failed: 0 });
      assert.equal((await store.get('thread-function', ALL))?.request_payload, '{"text":"kept"}');
    });

    test('a payload nested too deeply for any copy is left out, said in its place; the record and the batch after it are written', async () => {
      const { writer, counts } = writerOf();
      let deep: Record<string, unknown> = { leaf: true };
      for (let level = 0; level < 50_000; level += 1) deep = { a: deep };
      writer.push(finished('thread-too-deep', { requestPayload: { model: 'gpt-4o-mini', arguments: deep } }));
      writer.push(finished('thread-after-deep'));
      await writer.close();
      assert.deepEqual({ written: counts.written, failed: counts.failed }, { written: 2, failed: 0 });
      const stored = (await store.get('thread-too-deep', ALL))!;
      assert.equal(stored.status, 200);
      assert.equal(JSON.parse(stored.request_payload!), PAYLOAD_TOO_DEEP);
      assert.ok((await store.get('thread-after-deep', ALL)) !== undefined);
    });

    test('a large body goes to the thread in a lent buffer: stored as received, the caller\'s bytes left whole', async () => {
      const { writer, counts } = writerOf();
      const image = Buffer.alloc(300 * 1024, 5).toString('base64');
      const bodies = ['thread-large-1', 'thread-large-2'].map((id) => Buffer.from(JSON.stringify({ model: 'gpt-4o-mini', id, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } }] }] })));
      const records = bodies.map((bytes, index) => finished(`thread-large-${index + 1}`, { requestPayload: null, requestPayloadJson: bytes }));
      writer.push(records[0]!);
      await writer.flush();
      writer.push(records[1]!);
      await writer.close();
      assert.equal(counts.written, 2);
      for (const [index, bytes] of bodies.entries()) {
        // Never moved: a pass-through body may still be on its way upstream.
        assert.equal(records[index]!.record.requestPayloadJson, bytes);
        assert.equal(bytes.byteLength > 0 && bytes.toString('utf8').includes(`"id":"thread-large-${index + 1}"`), true);
        const stored = JSON.parse((await store.get(`thread-large-${index + 1}`, ALL))!.request_payload!) as { id: string; messages: [{ content: [{ image_url: { url: string } }] }] };
        assert.equal(stored.id, `thread-large-${index + 1}`);
        assert.match(stored.messages[0].content[0].image_url.url, /^\[omitted image\/png: 307200 bytes, sha256 [0-9a-f]{64}\]$/);
      }
    });

    test('a batch whose large bodies are more than the pool keeps goes in runs that each fit it', async () => {
      const { writer, counts } = writerOf({ entry: new URL('./fixtures/lending-log-thread.mjs', import.meta.url) });
      // Twelve bodies, each lent in a buffer of 2 MiB: 24 MiB, where the pool keeps 16.
      for (let index = 0; index < 12; index += 1) writer.push(finished(`lent-run-${index}`, { requestPayload: null, requestPayloadJson: Buffer.alloc(1_500_000, 0x20) }));
      writer.push(finished('lent-run-small'));
      await writer.close();
      assert.equal(counts.written, 13);
      const batches = readFileSync(join(storage.location.dataDir, 'batches.txt'), 'utf8').trim().split('\n').map((line) => line.split(' ').map(Number));
      assert.deepEqual(batches, [
        [8, 16 * 1024 * 1024],
        [5, 4 * 2 * 1024 * 1024],
      ]);
    });

    test('a thread that stops mid-batch is reported and replaced; only the record that stops it on its own is left out', async () => {
      // A thread that answers as the writer's own does, but stops whenever a batch holds `crash-stops`.
      const { writer, counts } = writerOf({ entry: new URL('./fixtures/stopping-log-thread.mjs', import.meta.url) });
      for (const id of ['crash-before', 'crash-stops', 'crash-after']) writer.push(finished(id));
      await writer.close();
      assert.deepEqual({ written: counts.written, refused: counts.refused, failed: counts.failed }, { written: 2, refused: 1, failed: 0 });
      // The batch, again in a new thread, then each record alone: the stopping one twice.
      assert.equal(counts.restarts, 4);
      const written = readFileSync(join(storage.location.dataDir, 'written.txt'), 'utf8').trim().split('\n');
      assert.deepEqual(written, ['crash-before', 'crash-after']);
    });
  });
}

describe('lent buffers', () => {
  const body = (length: number, fill: number) => Buffer.alloc(length, fill);

  test('a large body is copied into a buffer of the next power of two; a small or a huge one is not lent', () => {
    const buffers = new LentBuffers();
    const copy = buffers.lend(body(100_000, 7))!;
    assert.equal(copy.byteLength, 100_000);
    assert.equal(copy.buffer.byteLength, 131_072);
    assert.ok(copy.every((byte) => byte === 7));
    assert.equal(buffers.lend(body(64 * 1024 - 1, 1)), undefined);
    assert.equal(buffers.lend(new Uint8Array(new ArrayBuffer(16 * 1024 * 1024 + 1))), undefined);
  });

  test('a buffer given back is lent again, up to what the pool keeps', () => {
    const buffers = new LentBuffers();
    const first = buffers.lend(body(1_400_000, 1))!;
    buffers.giveBack(first.buffer as ArrayBuffer);
    assert.equal(buffers.pooledBytes, 2 * 1024 * 1024);
    const second = buffers.lend(body(1_100_000, 2))!;
    assert.equal(second.buffer, first.buffer);
    assert.equal(buffers.pooledBytes, 0);
    assert.ok(second.every((byte) => byte === 2));
    // Eight buffers of 2 MiB fill the pool's 16 MiB; a ninth is left to the collector.
    const lent = Array.from({ length: 9 }, () => buffers.lend(body(1_500_000, 3))!.buffer as ArrayBuffer);
    for (const buffer of lent) buffers.giveBack(buffer);
    assert.equal(buffers.pooledBytes, 16 * 1024 * 1024);
  });

  test('a buffer of another size (a thread\'s own copy of a body) is not kept', () => {
    const buffers = new LentBuffers();
    buffers.giveBack(new ArrayBuffer(1_400_000));
    buffers.giveBack(new ArrayBuffer(1024));
    assert.equal(buffers.pooledBytes, 0);
  });
});
