import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Counter, Gauge, Histogram, Registry } from '../src/metrics/index.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';
import { CLI_NOT_BUILT, startServeProcess } from './helpers/serve-process.js';

/** Every sample line of the text format: name, optional labels, a number. */
const SAMPLE_LINE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (-?[0-9.]+(e[+-]?\d+)?|\+Inf|-Inf|NaN)$/;

function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    if (wanted.every((pair) => labelText.split(',').includes(pair))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('Prometheus text format', () => {
  test('counters, gauges and histograms render in exposition format 0.0.4', () => {
    const registry = new Registry();
    const counter = registry.register(new Counter('demo_total', 'A demo counter.', ['route']));
    const money = registry.register(new Counter('demo_usd_total', 'Money.', [], 1_000_000));
    registry.register(new Gauge('demo_depth', 'Depth.', () => 7));
    const histogram = registry.register(new Histogram('demo_seconds', 'Durations.', ['route'], [0.1, 1]));
    counter.inc({ route: '/a"b\\c\nd' });
    counter.inc({ route: '/a"b\\c\nd' }, 2);
    for (let i = 0; i < 10; i += 1) money.inc({}, 100_000); // ten × $0.10 is exactly $1
    histogram.observe({ route: '/x' }, 0.05);
    histogram.observe({ route: '/x' }, 0.5);
    histogram.observe({ route: '/x' }, 5);
    const text = registry.render();
    assert.match(text, /^# HELP demo_total A demo counter\.\n# TYPE demo_total counter\n/);
    assert.ok(text.includes('demo_total{route="/a\\"b\\\\c\\nd"} 3\n'));
    assert.ok(text.includes('demo_usd_total 1\n'));
    assert.ok(text.includes('# TYPE demo_depth gauge\ndemo_depth 7\n'));
    assert.ok(text.includes('demo_seconds_bucket{route="/x",le="0.1"} 1\n'));
    assert.ok(text.includes('demo_seconds_bucket{route="/x",le="1"} 2\n'));
    assert.ok(text.includes('demo_seconds_bucket{route="/x",le="+Inf"} 3\n'));
    assert.ok(text.includes('demo_seconds_sum{route="/x"} 5.55\n'));
    assert.ok(text.includes('demo_seconds_count{route="/x"} 3\n'));
    for (const line of text.trim().split('\n').filter((line) => !line.startsWith('#'))) assert.match(line, SAMPLE_LINE);
  });
});

describe('GET /metrics', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;

  const scrape = async (authorization = `Bearer ${TEST_ADMIN_TOKEN}`) => {
    const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization } });
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  };

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-metrics-test-000000000' } });
    key = await gateway.createKey({ rpm: 2 });
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('is authorised by the admin token or a metrics:read key, which reads metrics and nothing else', async () => {
    assert.equal((await fetch(`${gateway.url}/metrics`)).status, 401);
    // A model key without the scope is told which scope it lacks.
    const modelKey = await scrape(`Bearer ${key}`);
    assert.equal(modelKey.status, 403);
    assert.equal(JSON.parse(modelKey.text).error.code, 'insufficient_scope');
    const scraper = await gateway.createKey({ scopes: ['metrics:read'] });
    const scraped = await scrape(`Bearer ${scraper}`);
    assert.equal(scraped.status, 200);
    assert.match(scraped.text, /modelgate_requests_total/);
    // The scrape credential cannot create keys, nor make model calls.
    const createKey = await fetch(`${gateway.url}/admin/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${scraper}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'escalated', scopes: ['model:request'] }),
    });
    assert.equal(createKey.status, 401);
    const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${scraper}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(chat.status, 403);
    assert.equal(((await chat.json()) as { error: { code: string } }).error.code, 'insufficient_scope');
    const ok = await scrape();
    assert.equal(ok.status, 200);
    assert.equal(ok.type, 'text/plain; version=0.0.4; charset=utf-8');
  });

  test('requests, latency by route, model and status; upstream latency; tokens; cost; limits; log queue', async () => {
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 5, completionTokens: 4 } });
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await awayFromMinuteBoundary();
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }), { status: 429 });
    await gateway.gateway.context.logs.writer.flush();

    const { text } = await scrape();
    for (const line of text.trim().split('\n').filter((line) => !line.startsWith('#'))) assert.match(line, SAMPLE_LINE);
    const chat = { route: '/v1/chat/completions', model: 'gpt-4o' };
    assert.equal(sample(text, 'modelgate_requests_total', { ...chat, status: '200' }), 2);
    assert.equal(sample(text, 'modelgate_requests_total', { ...chat, status: '429' }), 1);
    assert.equal(sample(text, 'modelgate_request_duration_seconds_count', { ...chat, status: '200' }), 2);
    assert.equal(sample(text, 'modelgate_request_duration_seconds_bucket', { ...chat, status: '200', le: '+Inf' }), 2);
    assert.equal(sample(text, 'modelgate_upstream_duration_seconds_count', { provider: 'openai', model: 'gpt-4o' }), 2);
    assert.equal(sample(text, 'modelgate_tokens_total', { model: 'gpt-4o', kind: 'prompt' }), 10);
    assert.equal(sample(text, 'modelgate_tokens_total', { model: 'gpt-4o', kind: 'completion' }), 8);
    assert.equal(sample(text, 'modelgate_cost_usd_total', { model: 'gpt-4o' }), 0.000106);
    assert.equal(sample(text, 'modelgate_rate_limited_total', { code: 'rate_limit_exceeded' }), 1);
    assert.equal(sample(text, 'modelgate_log_queue_depth'), 0);
    assert.ok(sample(text, 'modelgate_log_records_written_total')! >= 3);
    assert.equal(sample(text, 'modelgate_limiter_redis_fallback'), 0);
    // Unkeyed routes are counted with model "none".
    assert.ok(sample(text, 'modelgate_requests_total', { route: '/metrics', model: 'none', status: '200' })! >= 1);
  });

  test('a model id the catalog does not know is one "inferred" label, not one series per name', async () => {
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 1, completionTokens: 1 } });
    const other = await gateway.createKey();
    const client = new OpenAI({ apiKey: other, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-future-1', messages: [{ role: 'user', content: 'hi' }] });
    await client.chat.completions.create({ model: 'gpt-future-2', messages: [{ role: 'user', content: 'hi' }] });
    const { text } = await scrape();
    assert.equal(sample(text, 'modelgate_requests_total', { route: '/v1/chat/completions', model: 'inferred', status: '200' }), 2);
    assert.ok(!text.includes('gpt-future-1'));
  });
});

const REDIS_URL = process.env.TEST_REDIS_URL;

describe('GET /metrics of serve --workers', { skip: CLI_NOT_BUILT || (REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false) }, () => {
  test("whichever worker a scrape reaches, it shows every worker's series, each labelled with its worker", async () => {
    // Prometheus has one target for the shared port: each scrape used to show the counters of
    // the one worker that took it, so a counter jumped between the workers' values.
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-metrics-workers-'));
    const serve = await startServeProcess({
      MODELGATE_PORT: '0',
      MODELGATE_DATA_DIR: join(dir, 'data'),
      MODELGATE_WORKERS: '2',
      REDIS_URL: REDIS_URL!,
      MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MODELGATE_LOG_LEVEL: 'warn',
    });
    try {
      // A new connection each: the primary hands connections to the workers in turn.
      const get = (path: string, headers: Record<string, string> = {}) => fetch(`${serve.url}${path}`, { headers: { connection: 'close', ...headers } }).then((response) => response.text());
      for (let index = 0; index < 10; index += 1) await get('/v1/models');
      for (let scrape = 0; scrape < 4; scrape += 1) {
        const text = await get('/metrics', { authorization: `Bearer ${TEST_ADMIN_TOKEN}` });
        const lines = text.trim().split('\n');
        for (const line of lines.filter((line) => !line.startsWith('#'))) assert.match(line, SAMPLE_LINE);
        const models = lines.filter((line) => line.startsWith('modelgate_requests_total{') && line.includes('route="/v1/models"'));
        assert.ok(models.every((line) => /^modelgate_requests_total\{worker="\d+",/.test(line)), models.join('\n'));
        assert.equal(models.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0), 10);
        assert.equal(lines.filter((line) => line === '# TYPE modelgate_requests_total counter').length, 1);
      }
    } finally {
      await serve.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
