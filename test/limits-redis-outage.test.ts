import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake } from './fakes/openai.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startTcpProxy, throughProxy } from './helpers/tcp-proxy.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

async function chat(gateway: TestGateway, key: string) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(CHAT),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { error?: { code: string; message: string } } };
}

const readyz = async (gateway: TestGateway) => ((await (await fetch(`${gateway.url}/readyz`)).json()) as { limits?: string }).limits;

/** Redis made unreachable through a TCP proxy the test cuts (the shared Redis server keeps running). */
async function withRedisBehindProxy(redisOutage: 'local' | 'failClosed', run: (gateway: TestGateway, cut: () => void, restore: () => void) => Promise<void>): Promise<void> {
  const target = new URL(REDIS_URL!);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const fake = await startOpenAIFake();
  const gateway = await startTestGateway({
    env: { OPENAI_API_KEY: 'sk-upstream-outage-test-00000000000000', OPENAI_BASE_URL: `${fake.server.url}/v1`, REDIS_URL: throughProxy(REDIS_URL!, proxy), MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:` },
    configFile: { limits: { redisOutage, redisCommandTimeoutMs: 2000 } },
  });
  try {
    await run(gateway, () => proxy.refuse(), () => proxy.restore());
  } finally {
    await gateway.close();
    await fake.server.close();
    await proxy.close();
  }
}

describe('limits while Redis is away', { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, () => {
  test('failClosed: limited keys get 503 while the counters cannot be shared; keys without limits are served; /readyz and the metric say so', async () => {
    await withRedisBehindProxy('failClosed', async (gateway, cut, restore) => {
      const limited = await gateway.createKey({ rpm: 10 });
      const unlimited = await gateway.createKey();
      assert.equal((await chat(gateway, limited)).status, 200);
      assert.equal(await readyz(gateway), 'shared');
      cut();
      const refused = await chat(gateway, limited);
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error?.code, 'storage_unavailable');
      assert.match(refused.body.error!.message, /limits\.redisOutage: failClosed/);
      assert.equal(refused.retryAfter, '5');
      // Every further request in the outage is refused too, never counted on its own.
      const during = await Promise.all(Array.from({ length: 12 }, () => chat(gateway, limited)));
      assert.deepEqual(new Set(during.map((answer) => answer.status)), new Set([503]));
      assert.equal((await chat(gateway, unlimited)).status, 200);
      assert.equal(await readyz(gateway), 'fail_closed');
      const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
      assert.match(metrics, /^modelgate_limiter_fail_closed 1$/m);
      restore();
    });
  });

  test('local (the default): each instance counts on its own while Redis is away; /readyz says local', async () => {
    await withRedisBehindProxy('local', async (gateway, cut) => {
      const limited = await gateway.createKey({ rpm: 10 });
      assert.equal((await chat(gateway, limited)).status, 200);
      cut();
      assert.equal((await chat(gateway, limited)).status, 200);
      assert.equal(await readyz(gateway), 'local');
    });
  });
});
