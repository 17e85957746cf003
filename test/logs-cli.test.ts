import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';
import { adminCli } from './helpers/admin-cli.js';

/** `modelgate logs|usage …` as an operator runs it, against a gateway started here. */
const cli = adminCli;

describe('modelgate logs and usage', { skip: CLI_NOT_BUILT }, () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let requestId: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cli-test-00000000000000' } });
    const key = await gateway.createKey();
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const { response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello log' }] }).withResponse();
    requestId = response.headers.get('x-request-id')!;
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'second' }] });
    await gateway.gateway.context.logs.writer.flush();
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('logs list: a table by default, the admin JSON with --json, filters passed on', async () => {
    const table = await cli(gateway, 'logs', 'list');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^TIME\s+REQUEST ID\s+KEY\s+MODEL\s+STATUS/);
    assert.ok(table.stdout.includes(requestId));
    const json = await cli(gateway, 'logs', 'list', '--model', 'gpt-4o', '--since', '1h', '--json');
    assert.equal(json.code, 0, json.stderr);
    const page = JSON.parse(json.stdout);
    assert.deepEqual(page.data.map((record: { request_id: string }) => record.request_id), [requestId]);
  });

  test('logs show: the record in full, payloads included', async () => {
    const shown = await cli(gateway, 'logs', 'show', requestId);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /cost\s+\$0\.000053/);
    assert.ok(shown.stdout.includes('hello log'));
    const missing = await cli(gateway, 'logs', 'show', 'req_missing');
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /There is no log record with request id req_missing/);
  });

  test('logs export --format jsonl: one JSON record per line', async () => {
    const exported = await cli(gateway, 'logs', 'export', '--format', 'jsonl');
    assert.equal(exported.code, 0, exported.stderr);
    const lines = exported.stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(lines.length, 2);
    assert.ok(lines.every((line) => 'request_payload' in line));
    const badFormat = await cli(gateway, 'logs', 'export', '--format', 'csv');
    assert.notEqual(badFormat.code, 0);
    assert.match(badFormat.stderr, /jsonl/);
  });

  test('logs show: a record whose payloads were dropped says why', async () => {
    await gateway.gateway.context.logs.store.insertBatch([
      { request_id: 'req_capped', started_at: Date.now() - 86_400_000, endpoint: '/v1/chat/completions', status: 200, latency_ms: 1, streaming: 0, payloads_omitted: 'size_cap' },
    ]);
    const shown = await cli(gateway, 'logs', 'show', 'req_capped');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /payloads\s+omitted \(dropped by the log's size cap\)/);
    await gateway.gateway.context.logs.store.deleteOlderThan(Date.now() - 3_600_000, 10);
  });

  test("logs storage: the log's size on disk, its counts and the size cap; the same numbers in metrics", async () => {
    const json = await cli(gateway, 'logs', 'storage', '--json');
    assert.equal(json.code, 0, json.stderr);
    const storage = JSON.parse(json.stdout);
    assert.equal(storage.database, 'sqlite');
    assert.equal(storage.records, 2);
    assert.ok(storage.payload_bytes > 0 && storage.database_bytes > storage.payload_bytes);
    assert.equal(storage.max_bytes, 10_240 * 1024 * 1024);
    assert.equal(storage.reclaims_free_pages, true);
    const table = await cli(gateway, 'logs', 'storage');
    assert.match(table.stdout, /records\s+2\n/);
    assert.match(table.stdout, /size cap\s+[\d.]+ MiB of 10240\.0 MiB/);
    await gateway.gateway.context.logs.sizeCap.runOnce();
    const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    assert.match(metrics, /^modelgate_log_store_records(\{[^}]*\})? 2$/m);
    assert.match(metrics, new RegExp(`^modelgate_log_store_payload_bytes(\\{[^}]*\\})? ${storage.payload_bytes}$`, 'm'));
  });

  test('usage --by model, and a bad filter reported with the gateway message', async () => {
    const usage = await cli(gateway, 'usage', '--by', 'model', '--json');
    assert.equal(usage.code, 0, usage.stderr);
    const models = JSON.parse(usage.stdout).data.map((row: { model: string }) => row.model).sort();
    assert.deepEqual(models, ['gpt-4o', 'gpt-4o-mini']);
    const table = await cli(gateway, 'usage');
    assert.match(table.stdout, /^DAY\s+REQUESTS/);
    const bad = await cli(gateway, 'usage', '--since', 'last tuesday');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /since must be an ISO 8601 date or time/);
  });
});
