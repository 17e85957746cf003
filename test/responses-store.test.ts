import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { RetentionJob } from '../src/logs/index.js';
import { ResponseStore, type StoredResponse } from '../src/responses/index.js';
import { openBackendStorage, STORAGE_BACKENDS } from './helpers/storage-backends.js';

/*
 * Stored responses on both databases: bound to their key, deleted on request and by the
 * request log's retention.
 */

const DAY_MS = 86_400_000;

function stored(id: string, owner: string, createdAt: number): StoredResponse {
  return {
    id,
    owner,
    createdAt,
    model: 'claude-sonnet-4-5',
    native: false,
    response: { id, object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Bonjour ✓' }] }] },
    inputItems: [{ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }],
  };
}

for (const backend of STORAGE_BACKENDS) {
  describe(`stored responses on ${backend.name}`, { skip: backend.skip }, () => {
    let store: ResponseStore;
    let close: () => Promise<void>;

    before(async () => {
      const opened = await openBackendStorage(backend);
      store = new ResponseStore(opened.storage.db);
      close = opened.close;
    });
    after(() => close());

    test('a response is found by its own key only, with its objects as saved', async () => {
      const now = Date.now();
      await store.save({ ...stored('resp_a', 'key_1', now), native: true });
      const found = await store.find('resp_a', 'key_1');
      assert.deepEqual(found, { ...stored('resp_a', 'key_1', now), native: true });
      assert.equal(await store.find('resp_a', 'key_2'), null);
      assert.equal(await store.find('resp_unknown', 'key_1'), null);
    });

    test('delete removes it for its key only', async () => {
      await store.save(stored('resp_b', 'key_1', Date.now()));
      assert.equal(await store.delete('resp_b', 'key_2'), false);
      assert.notEqual(await store.find('resp_b', 'key_1'), null);
      assert.equal(await store.delete('resp_b', 'key_1'), true);
      assert.equal(await store.find('resp_b', 'key_1'), null);
      assert.equal(await store.delete('resp_b', 'key_1'), false);
    });

    test("the request log's retention deletes responses older than it, in batches", async () => {
      const now = Date.now();
      for (let index = 0; index < 5; index += 1) await store.save(stored(`resp_old_${index}`, 'key_1', now - 40 * DAY_MS));
      await store.save(stored('resp_new', 'key_1', now - DAY_MS));
      const job = new RetentionJob(store, { retentionDays: 30, batchSize: 2, intervalMs: 1000, firstRunDelayMs: 1000, rows: 'stored responses' }, pino({ level: 'silent' }));
      assert.equal(await job.runOnce(now), 5);
      assert.equal(await store.find('resp_old_0', 'key_1'), null);
      assert.notEqual(await store.find('resp_new', 'key_1'), null);
    });
  });
}
