import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { openStorage, type Storage } from '../src/storage/index.js';
import { LogStore, LogWriter, LogWriterThread, PAYLOAD_TOO_DEEP, type FinishedRequest, type LogThreadOptions, type RequestRecord } from '../src/logs/index.js';
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
