import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { createPostgresDatabase, POSTGRES_URL } from './helpers/databases.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';

/**
 * `limits.redisOutage: local` with two gateways: a Redis server of this test's own is stopped
 * mid-minute, and each gateway then enforces its share of the per-minute limit (limit ÷ the
 * instances announced through Redis), having counted what it admitted itself this minute.
 */

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
const RPM = 10;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

async function startRedisServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let attempt = 0; attempt < 100 && !(await answersPing(port)); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

async function chat(gateway: TestGateway, key: string): Promise<number> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(CHAT),
  });
  await response.arrayBuffer();
  return response.status;
}

interface Readiness {
  limits?: string;
  limits_share?: { instances: number; fraction: number };
}
const readyz = async (gateway: TestGateway) => (await (await fetch(`${gateway.url}/readyz`)).json()) as Readiness;

describe('local outage mode: each instance enforces its share of a limit', { skip: POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : false }, () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  let fake: OpenAIFake;
  let gateways: [TestGateway, TestGateway];

  before(async () => {
    database = await createPostgresDatabase();
    redis = await startRedisServer();
    fake = await startOpenAIFake();
    const env = {
      DATABASE_URL: database.url,
      MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      OPENAI_API_KEY: 'sk-upstream-share-test-00000000000000',
      OPENAI_BASE_URL: `${fake.server.url}/v1`,
      REDIS_URL: redis.url,
      MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
    };
    const configFile = { limits: { redisOutage: 'local', redisCommandTimeoutMs: 500 } };
    gateways = [await startTestGateway({ env, configFile }), await startTestGateway({ env, configFile })];
  });
  after(async () => {
    for (const gateway of gateways) await gateway.close();
    await redis.stop();
    await fake.server.close();
    await database.drop();
  });

  test('Redis stopped mid-minute: the two gateways admit the rest of the per-minute limit between them, not a whole limit each; /readyz and the metric show the share', async () => {
    const [first, second] = gateways;
    // Each gateway announces itself every 5 s: wait until both have seen both.
    for (let attempt = 0; attempt < 100; attempt += 1) {
      const shares = await Promise.all(gateways.map(readyz));
      if (shares.every((readiness) => readiness.limits_share?.instances === 2)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    for (const gateway of gateways) assert.deepEqual((await readyz(gateway)).limits_share, { instances: 2, fraction: 0.5 });

    await awayFromMinuteBoundary(30_000);
    const key = await first.createKey({ rpm: RPM });
    for (const gateway of [first, second, first, second]) assert.equal(await chat(gateway, key), 200, 'shared counters');

    await redis.stop();
    const during = { first: [] as number[], second: [] as number[] };
    for (let attempt = 0; attempt < RPM; attempt += 1) {
      during.first.push(await chat(first, key));
      during.second.push(await chat(second, key));
    }
    const admitted = (statuses: number[]) => statuses.filter((status) => status === 200).length;
    // Each gateway's share is 5 a minute, 2 of it spent before the outage.
    assert.equal(admitted(during.first), RPM / 2 - 2, `first gateway: ${during.first.join(' ')}`);
    assert.equal(admitted(during.second), RPM / 2 - 2, `second gateway: ${during.second.join(' ')}`);
    assert.ok([...during.first, ...during.second].every((status) => status === 200 || status === 429));
    assert.equal(4 + admitted(during.first) + admitted(during.second), RPM, 'the limit held in total');

    const readiness = await readyz(first);
    assert.equal(readiness.limits, 'local');
    assert.deepEqual(readiness.limits_share, { instances: 2, fraction: 0.5 });
    const metrics = await (await fetch(`${first.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    assert.match(metrics, /^modelgate_limiter_local_share 0\.5$/m);
    assert.match(metrics, /^modelgate_limiter_redis_fallback 1$/m);
  });
});
