import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { POSTGRES_URL, createPostgresDatabase } from './helpers/databases.js';
import { startTestGateway } from './helpers/gateway.js';
import { startTcpProxy, throughProxy } from './helpers/tcp-proxy.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

async function getJson(url: string): Promise<{ status: number; body: { status: string; checks?: Record<string, string>; missing?: string[] } }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as { status: string } };
}

describe('GET /healthz and GET /readyz', () => {
  test('an instance with SQLite and a provider is alive and ready, without a credential', async () => {
    const gateway = await startTestGateway();
    try {
      assert.deepEqual(await getJson(`${gateway.url}/healthz`), { status: 200, body: { status: 'alive' } });
      assert.deepEqual(await getJson(`${gateway.url}/readyz`), {
        status: 200,
        body: { status: 'ready', checks: { storage: 'ok', redis: 'not_configured', providers: 'ok' }, missing: [], limits: 'in_process' },
      });
    } finally {
      await gateway.close();
    }
  });

  test('no provider configured: not ready (503), saying what to set; still alive', async () => {
    const gateway = await startTestGateway({ env: { OPENAI_API_KEY: '', GEMINI_API_KEY: '', ANTHROPIC_API_KEY: '' } });
    try {
      const ready = await getJson(`${gateway.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'not_ready');
      assert.equal(ready.body.checks?.providers, 'none_configured');
      assert.match(ready.body.missing!.join('\n'), /no provider is configured; set a provider API key/);
      assert.equal((await getJson(`${gateway.url}/healthz`)).status, 200);
    } finally {
      await gateway.close();
    }
  });

  test('PostgreSQL and Redis away: 503 naming both; back: ready again; /healthz stays 200 throughout', {
    skip: POSTGRES_URL === undefined || REDIS_URL === undefined ? 'TEST_DATABASE_URL and TEST_REDIS_URL are needed' : false,
  }, async () => {
    const database = await createPostgresDatabase();
    const pgTarget = new URL(POSTGRES_URL!);
    const redisTarget = new URL(REDIS_URL!);
    const pgProxy = await startTcpProxy({ host: pgTarget.hostname, port: Number(pgTarget.port || 5432) });
    const redisProxy = await startTcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
    const gateway = await startTestGateway({
      env: {
        DATABASE_URL: throughProxy(database.url, pgProxy),
        MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        REDIS_URL: throughProxy(REDIS_URL!, redisProxy),
        MODELGATE_DATABASE_STATEMENT_TIMEOUT_MS: '1000',
      },
    }).catch(async (error: unknown) => {
      await Promise.all([pgProxy.close(), redisProxy.close(), database.drop()]);
      throw error;
    });
    try {
      const before = await getJson(`${gateway.url}/readyz`);
      assert.deepEqual(before.body.checks, { storage: 'ok', redis: 'ok', providers: 'ok' });

      pgProxy.refuse();
      redisProxy.refuse();
      const started = Date.now();
      const down = await getJson(`${gateway.url}/readyz`);
      assert.ok(Date.now() - started < 3_000, 'readiness answers within its probe time');
      assert.equal(down.status, 503);
      assert.deepEqual(down.body.checks, { storage: 'unreachable', redis: 'unreachable', providers: 'ok' });
      assert.match(down.body.missing!.join('\n'), /the database \(postgres\) did not answer.*DATABASE_URL/);
      assert.match(down.body.missing!.join('\n'), /Redis did not answer.*REDIS_URL/);
      assert.deepEqual(await getJson(`${gateway.url}/healthz`), { status: 200, body: { status: 'alive' } });

      pgProxy.restore();
      redisProxy.restore();
      const deadline = Date.now() + 10_000;
      let after = await getJson(`${gateway.url}/readyz`);
      while (after.status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        after = await getJson(`${gateway.url}/readyz`);
      }
      assert.equal(after.status, 200, JSON.stringify(after.body));
    } finally {
      await gateway.close();
      await pgProxy.close();
      await redisProxy.close();
      await database.drop();
    }
  });
});
