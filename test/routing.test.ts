/**
 * Routing beyond the fault matrix (docs/routing.md): fallbacks and the classes they answer, the
 * allow-list and a fallback, errors that are not retried, the provider's rate limit as the
 * caller sees it, the key's limits counted once, cooldowns shared through Redis, the
 * configuration's errors naming the field, reloads, and metrics.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { stringify as toYaml } from 'yaml';
import { loadConfig } from '../src/config/index.js';
import { watchRoutingConfig } from '../src/routing/index.js';
import { startFaultyOpenAI, type FaultyOpenAI } from './fakes/openai-faults.js';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { loggedRecord, startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT, startServeProcess } from './helpers/serve-process.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

const MODEL = 'gpt-4o-mini';
const FALLBACK = 'gpt-4.1-mini';

function ask(client: OpenAI, model = MODEL) {
  return client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
}

/** A model over deployment `a` (the provider's own settings, always tried first) and `b` (another base URL and credential), one retry. */
function overTwo(model: string, b: FaultyOpenAI, cooldown?: Record<string, number>) {
  return {
    model,
    retries: 1,
    backoffMs: 1,
    deployments: [
      { name: 'a', provider: 'openai', weight: 1_000_000 },
      { name: 'b', provider: 'openai', baseUrl: b.url, apiKeyEnv: 'OPENAI_API_KEY_B' },
    ],
    ...(cooldown === undefined ? {} : { cooldown }),
  };
}

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = `${name}{${Object.entries(labels).map(([key, value]) => `${key}="${value}"`).join(',')}}`;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${wanted} `));
  return line === undefined ? undefined : Number(line.slice(wanted.length + 1));
}

describe('fallbacks', () => {
  let a: FaultyOpenAI;
  let gateway: TestGateway;
  let client: OpenAI;
  before(async () => {
    a = await startFaultyOpenAI('a');
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: a.url },
      configFile: {
        routing: [
          { model: MODEL, retries: 0, fallbacks: [FALLBACK], fallbackOn: ['server_error', 'context_window_exceeded'], cooldown: { failures: 100 } },
          { model: 'gpt-4o', retries: 0, fallbacks: [FALLBACK], fallbackOn: ['timeout'] },
        ],
      },
    });
    // The caller may use only the routed model: the operator's fallback serves it all the same.
    client = new OpenAI({ apiKey: await gateway.createKey({ allowedModels: [MODEL, 'gpt-4o'] }), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway.close();
    await a.close();
  });

  test('retries spent: the fallback serves, past the allow-list; the log, the headers and the metrics say so', async () => {
    a.fail(MODEL, 'server-error-500');
    const { data, response } = await ask(client);
    assert.equal(data.choices[0]?.message.content, 'served by a');
    assert.equal(data.model, MODEL, 'the body shows the model asked for');
    assert.equal(response.headers.get('x-modelgate-model'), FALLBACK);
    assert.equal(response.headers.get('x-modelgate-attempts'), '2');
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.equal(record.requested_model, MODEL);
    assert.equal(record.resolved_model, FALLBACK, 'the log names the model that served (and prices it)');
    assert.deepEqual(
      record.detail.attempts.map(({ model, deployment, outcome }: Record<string, unknown>) => ({ model, deployment, outcome })),
      [
        { model: MODEL, deployment: 'openai', outcome: 'provider_error' },
        { model: FALLBACK, deployment: 'openai', outcome: 'ok' },
      ],
    );
    const metrics = gateway.gateway.context.metrics.render();
    assert.equal(sample(metrics, 'modelgate_routing_fallbacks_total', { model: MODEL, fallback: FALLBACK }), 1);
    assert.equal(sample(metrics, 'modelgate_deployment_attempts_total', { model: MODEL, deployment: 'openai', outcome: 'provider_error' }), 1);
    assert.equal(sample(metrics, 'modelgate_deployment_attempts_total', { model: FALLBACK, deployment: 'openai', outcome: 'ok' }), 1);
  });

  test('a prompt over the context window falls back when fallbackOn names context_window_exceeded', async () => {
    a.fail(MODEL, 'context-window');
    const { response } = await ask(client);
    assert.equal(response.headers.get('x-modelgate-model'), FALLBACK);
  });

  test('a failure of a class fallbackOn leaves out reaches the caller', async () => {
    a.fail('gpt-4o', 'server-error-500');
    const before = a.count(FALLBACK);
    await assert.rejects(ask(client, 'gpt-4o'), (error: unknown) => error instanceof OpenAI.APIError && error.status === 502);
    assert.equal(a.count(FALLBACK), before);
  });

  test("the caller's own mistake (a 400) is neither retried nor fallen back from", async () => {
    a.fail(MODEL, 'bad-request');
    const before = a.count(FALLBACK);
    await assert.rejects(ask(client), (error: unknown) => error instanceof OpenAI.APIError && error.status === 400);
    assert.equal(a.count(FALLBACK), before);
  });

  test('GET /v1/models shows the public catalog only', async () => {
    const listed = (await client.models.list()).data.map((model) => model.id);
    assert.deepEqual(listed, gateway.gateway.context.catalog.list().map((entry) => entry.id));
  });
});

describe('Anthropic falling back to OpenAI (docs/routing.md)', () => {
  let anthropic: FakeAnthropic;
  let openai: FaultyOpenAI;
  let gateway: TestGateway;
  let client: OpenAI;
  before(async () => {
    anthropic = await startFakeAnthropic();
    openai = await startFaultyOpenAI('openai');
    gateway = await startTestGateway({
      env: { ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY, OPENAI_BASE_URL: openai.url },
      configFile: { routing: [{ model: 'claude-sonnet-4-5', retries: 1, backoffMs: 1, fallbacks: ['gpt-4.1'] }] },
    });
    client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway.close();
    await anthropic.close();
    await openai.close();
  });

  test('an overloaded Anthropic (529, twice) hands a stream to OpenAI before its first frame', async () => {
    anthropic.reply({ error: 'overloaded_error' });
    const { data, response } = await client.chat.completions.create({ model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    let text = '';
    for await (const chunk of data) {
      text += chunk.choices[0]?.delta.content ?? '';
      assert.equal(chunk.model, 'claude-sonnet-4-5', 'chunks show the model asked for');
    }
    assert.equal(text, 'served by openai');
    assert.equal(response.headers.get('x-modelgate-model'), 'gpt-4.1');
    assert.equal(response.headers.get('x-modelgate-attempts'), '3');
    assert.equal(anthropic.requests.length, 2);
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.deepEqual(
      record.detail.attempts.map(({ model, provider, outcome }: Record<string, unknown>) => ({ model, provider, outcome })),
      [
        { model: 'claude-sonnet-4-5', provider: 'anthropic', outcome: 'provider_error' },
        { model: 'claude-sonnet-4-5', provider: 'anthropic', outcome: 'provider_error' },
        { model: 'gpt-4.1', provider: 'openai', outcome: 'ok' },
      ],
    );
    assert.equal(record.provider, 'openai');
  });
});

describe("the provider's rate limit and the key's limits", () => {
  let a: FaultyOpenAI;
  let b: FaultyOpenAI;
  let gateway: TestGateway;
  before(async () => {
    a = await startFaultyOpenAI('a');
    b = await startFaultyOpenAI('b');
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: a.url, OPENAI_API_KEY_B: 'sk-second-credential-b' },
      configFile: {
        routing: [
          { model: MODEL, retries: 0 },
          overTwo('gpt-4o', b),
        ],
      },
    });
  });
  after(async () => {
    await gateway.close();
    await a.close();
    await b.close();
  });

  test("a provider 429 nothing else could serve is 429 provider_rate_limited with the provider's Retry-After", async () => {
    const client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    a.fail(MODEL, 'rate-limit');
    await assert.rejects(ask(client), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 429);
      assert.equal(error.code, 'provider_rate_limited');
      assert.equal(error.headers?.get('retry-after'), '1');
      assert.equal(error.headers?.get('x-should-retry'), 'true');
      assert.equal(error.headers?.get('x-modelgate-attempts'), '1');
      return true;
    });
  });

  test("the key's per-minute limit counts a request once, however many attempts it took", async () => {
    const client = new OpenAI({ apiKey: await gateway.createKey({ rpm: 2 }), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    a.fail('gpt-4o', 'server-error-500');
    const { response } = await ask(client, 'gpt-4o');
    assert.equal(response.headers.get('x-modelgate-attempts'), '2');
    assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '1');
  });
});

describe('cooldowns shared through Redis', { skip: process.env.TEST_REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, () => {
  let a: FaultyOpenAI;
  let b: FaultyOpenAI;
  const gateways: TestGateway[] = [];
  before(async () => {
    a = await startFaultyOpenAI('a');
    b = await startFaultyOpenAI('b');
    const configFile = {
      limits: { redisKeyPrefix: `modelgate:test:${randomUUID()}:` },
      routing: [
        overTwo(MODEL, b, { failures: 1, durationMs: 60_000 }),
      ],
    };
    for (let index = 0; index < 2; index += 1) {
      gateways.push(await startTestGateway({ env: { OPENAI_BASE_URL: a.url, OPENAI_API_KEY_B: 'sk-b', REDIS_URL: process.env.TEST_REDIS_URL! }, configFile }));
    }
  });
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await a.close();
    await b.close();
  });

  test('while Redis is away, each instance goes on with the cooldowns it saw itself', async () => {
    const redis = new URL(process.env.TEST_REDIS_URL!);
    const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    const model = 'gpt-4.1-nano';
    const gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: a.url, OPENAI_API_KEY_B: 'sk-b', REDIS_URL: `redis://127.0.0.1:${proxy.port}` },
      configFile: {
        limits: { redisKeyPrefix: `modelgate:test:${randomUUID()}:`, redisCommandTimeoutMs: 200 },
        routing: [
          overTwo(model, b, { failures: 1, durationMs: 60_000 }),
        ],
      },
    });
    try {
      proxy.refuse();
      const client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      a.fail(model, 'unavailable-503');
      assert.equal((await ask(client, model)).response.headers.get('x-modelgate-attempts'), '2');
      const { data, response } = await ask(client, model);
      assert.equal(response.headers.get('x-modelgate-attempts'), '1');
      assert.equal(data.choices[0]?.message.content, 'served by b');
      assert.equal(a.count(model), 1);
    } finally {
      await gateway.close();
      await proxy.close();
    }
  });

  test('a deployment cooled down by one instance is skipped by the other', async () => {
    const [first, second] = gateways as [TestGateway, TestGateway];
    a.fail(MODEL, 'unavailable-503');
    const one = new OpenAI({ apiKey: await first.createKey(), baseURL: `${first.url}/v1`, maxRetries: 0 });
    assert.equal((await ask(one)).response.headers.get('x-modelgate-attempts'), '2');
    const two = new OpenAI({ apiKey: await second.createKey(), baseURL: `${second.url}/v1`, maxRetries: 0 });
    const { data } = await ask(two);
    assert.equal(data.choices[0]?.message.content, 'served by b');
    assert.equal(a.count(MODEL), 1, 'the second instance never called the cooled-down deployment');
  });
});

describe('configuration', () => {
  const failsWith = async (routing: unknown[], pattern: RegExp, env: Record<string, string> = {}) => {
    await assert.rejects(startTestGateway({ env, configFile: { routing } }), (error: Error) => {
      assert.match(error.message, pattern);
      return true;
    });
  };

  test('a bad value is refused at start-up naming the field', async () => {
    await failsWith([{ model: MODEL, retries: -1 }], /invalid setting routing\.0\.retries/);
    await failsWith([{ model: MODEL, fallbackOn: ['5xx'] }], /invalid setting routing\.0\.fallbackOn\.0.*must be one of rate_limit, server_error/);
    await failsWith([{ model: 'gpt-9' }], /invalid setting routing\[0\]\.model: "gpt-9" is not a model/);
    await failsWith([{ model: MODEL, deployments: [{ provider: 'openai' }, { provider: 'no-such-cloud' }] }], /invalid setting routing\[0\]\.deployments\[1\]\.provider: "no-such-cloud" is not a provider/);
    await failsWith([{ model: MODEL, deployments: [{ provider: 'openai', apiKeyEnv: 'NOT_SET_ANYWHERE' }] }], /invalid setting routing\[0\]\.deployments\[0\]\.apiKeyEnv: the environment variable NOT_SET_ANYWHERE is not set/);
    await failsWith([{ model: MODEL, fallbacks: ['text-embedding-3-small'] }], /invalid setting routing\[0\]\.fallbacks\[0\]: "text-embedding-3-small" is a embedding model/);
    await failsWith([{ model: 'text-embedding-3-small', deployments: [{ provider: 'anthropic' }] }], /routing\[0\]\.deployments\[0\]\.provider: anthropic does not serve embedding models/);
    await failsWith([{ model: MODEL }, { model: MODEL }], /routing\[1\]\.model: .* routing\[0\] routes already/);
  });

  test('every problem of the routing list is listed at once, each naming its field', async () => {
    const routing = [
      { model: 'gpt-9' },
      { model: MODEL, deployments: [{ provider: 'no-such-cloud' }, { provider: 'openai', apiKeyEnv: 'NOT_SET_ANYWHERE' }], fallbacks: ['text-embedding-3-small'] },
    ];
    await assert.rejects(startTestGateway({ configFile: { routing } }), (error: Error) => {
      const lines = error.message.split('\n');
      assert.equal(lines[0], '4 settings are invalid:');
      assert.match(error.message, /routing\[0\]\.model: "gpt-9" is not a model/);
      assert.match(error.message, /routing\[1\]\.deployments\[0\]\.provider: "no-such-cloud" is not a provider/);
      assert.match(error.message, /routing\[1\]\.deployments\[1\]\.apiKeyEnv: the environment variable NOT_SET_ANYWHERE is not set/);
      assert.match(error.message, /routing\[1\]\.fallbacks\[0\]: "text-embedding-3-small" is a embedding model/);
      return true;
    });
  });
});

describe('reloads', () => {
  test('SIGHUP and a changed file apply the new routing; an invalid file keeps the old one and says why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-routing-'));
    const file = join(dir, 'modelgate.yaml');
    const write = (routing: unknown[]) => writeFileSync(file, toYaml({ routing }));
    write([{ model: MODEL, retries: 1 }]);
    const applied: number[] = [];
    const errors: string[] = [];
    const stop = watchRoutingConfig({
      file,
      reload: () => {
        const { routing } = loadConfig({ env: { MODELGATE_CONFIG: file }, cwd: dir });
        applied.push(routing[0]!.retries);
      },
      log: { info: () => undefined, error: (fields) => errors.push(String(fields.reason)) },
    });
    try {
      process.kill(process.pid, 'SIGHUP');
      await waitFor(() => applied.length === 1);
      write([{ model: MODEL, retries: 3 }]);
      await waitFor(() => applied.at(-1) === 3);
      write([{ model: MODEL, retries: 'many' }]);
      await waitFor(() => errors.length > 0);
      assert.match(errors[0]!, /routing\.0\.retries/);
      assert.equal(applied.at(-1), 3);
    } finally {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a reload swaps the plans of a running gateway', async () => {
    const a = await startFaultyOpenAI('a');
    const gateway = await startTestGateway({ env: { OPENAI_BASE_URL: a.url } });
    try {
      const client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      a.fail(MODEL, 'server-error-500');
      await assert.rejects(ask(client), (error: unknown) => error instanceof OpenAI.APIError && error.status === 502);
      const config = loadConfig({ env: { MODELGATE_CONFIG: writeConfig({ routing: [{ model: MODEL, retries: 1, backoffMs: 1 }] }) } });
      gateway.gateway.context.applyRouting(config.routing);
      a.fail(MODEL, 'server-error-500');
      const { response } = await ask(client);
      assert.equal(response.headers.get('x-modelgate-attempts'), '2');
    } finally {
      await gateway.close();
      await a.close();
    }
  });
});

const SERVE_SKIP = CLI_NOT_BUILT || (process.env.TEST_REDIS_URL === undefined ? 'workers need Redis: TEST_REDIS_URL is not set' : false);

describe('reloads of a running `modelgate serve --workers 2`', { skip: SERVE_SKIP }, () => {
  test('a changed file and a SIGHUP to the primary reach every worker; requests keep being served', async () => {
    const a = await startFaultyOpenAI('a');
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-routing-serve-'));
    const file = join(dir, 'modelgate.yaml');
    const limits = { redisKeyPrefix: `modelgate:test:${randomUUID()}:` };
    const write = (routing: unknown[]) => writeFileSync(file, toYaml({ limits, routing }));
    write([{ model: MODEL, retries: 0 }]);
    const serve = await startServeProcess({
      MODELGATE_CONFIG: file,
      MODELGATE_PORT: '0',
      MODELGATE_WORKERS: '2',
      REDIS_URL: process.env.TEST_REDIS_URL!,
      MODELGATE_DATA_DIR: join(dir, 'data'),
      MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      OPENAI_API_KEY: 'sk-placeholder-openai',
      OPENAI_BASE_URL: a.url,
    });
    try {
      const created = await fetch(`${serve.url}/admin/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'reload', scopes: ['model:request'] }),
      });
      const client = new OpenAI({ apiKey: ((await created.json()) as { secret: string }).secret, baseURL: `${serve.url}/v1`, maxRetries: 0 });
      /** Whether every worker retries now: a few requests, each failing once upstream, all served. */
      const everyRequestRetried = async () => {
        for (let index = 0; index < 6; index += 1) {
          a.fail(MODEL, 'server-error-500');
          const answer = await ask(client).catch(() => null);
          if (answer?.response.headers.get('x-modelgate-attempts') !== '2') return false;
        }
        return true;
      };
      assert.equal(await everyRequestRetried(), false);
      write([{ model: MODEL, retries: 1, backoffMs: 1 }]);
      await waitFor(() => serve.output().split('routing reloaded').length > 2, 'both workers reloaded the changed file');
      assert.equal(await everyRequestRetried(), true);

      write([{ model: MODEL, retries: 'twice' }]);
      await waitFor(() => serve.output().includes('routing not reloaded'), 'the invalid file was reported');
      assert.match(serve.output(), /routing\.0\.retries/);
      assert.equal(await everyRequestRetried(), true, 'the routing in force stayed');

      const reloads = serve.output().split('routing reloaded').length;
      write([{ model: MODEL, retries: 1, backoffMs: 1 }]);
      await waitFor(() => serve.output().split('routing reloaded').length >= reloads + 2, 'both workers reloaded the mended file');
      const beforeHangUp = serve.output().split('routing reloaded').length;
      serve.child.kill('SIGHUP');
      await waitFor(() => serve.output().split('routing reloaded').length >= beforeHangUp + 2, 'a SIGHUP to the primary reloaded both workers');
      assert.equal(serve.child.exitCode, null, 'the primary lives through SIGHUP');
    } finally {
      await serve.stop();
      await a.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function writeConfig(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'modelgate-routing-')), 'modelgate.yaml');
  writeFileSync(file, toYaml(content));
  return file;
}

async function waitFor(condition: () => boolean, what = 'the reload happened'): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(condition(), what);
}
