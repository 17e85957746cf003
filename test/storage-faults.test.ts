import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { POSTGRES_URL, createPostgresDatabase } from './helpers/databases.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { startTcpProxy, throughProxy, type TcpProxy } from './helpers/tcp-proxy.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { isStorageUnavailable } from '../src/storage/index.js';
import { restoredRequestId } from '../src/logs/log-rows.js';
import { toGatewayError } from '../src/server/error-mapping.js';

const ADMIN_TOKEN = 'mg-admin-storage-faults-0123456789';
const REDIS_URL = process.env.TEST_REDIS_URL;
const skip = CLI_NOT_BUILT || (POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : false);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Setup {
  database: { url: string; drop: () => Promise<void> };
  proxy: TcpProxy;
  fake: OpenAIFake;
  env: Record<string, string>;
}

async function setUp(): Promise<Setup> {
  const database = await createPostgresDatabase();
  const target = new URL(POSTGRES_URL!);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const fake = await startOpenAIFake();
  const env = {
    MODELGATE_PORT: '0',
    MODELGATE_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'modelgate-faults-')), 'data'),
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    MODELGATE_LOG_LEVEL: 'warn',
    DATABASE_URL: throughProxy(database.url, proxy),
    MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    MODELGATE_DATABASE_STATEMENT_TIMEOUT_MS: '1000',
    OPENAI_BASE_URL: `${fake.server.url}/v1`,
    OPENAI_API_KEY: 'sk-fake-openai-0123456789',
  };
  return { database, proxy, fake, env };
}

async function tearDown(setup: Setup): Promise<void> {
  await setup.fake.close();
  await setup.proxy.close();
  await setup.database.drop();
}

function admin(server: ServeProcess, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...init.headers } });
}

async function createChatKey(server: ServeProcess): Promise<string> {
  const created = await admin(server, '/admin/v1/keys', { method: 'POST', body: JSON.stringify({ name: 'faults', scopes: ['model:request'] }) });
  assert.equal(created.status, 201);
  return ((await created.json()) as { secret: string }).secret;
}

/** Chats through the official SDK (no retries of its own) until stopped; every answer's status and request id. */
function chatTraffic(server: ServeProcess, secret: string): { stop: () => Promise<{ status: number; requestId: string | null }[]> } {
  const client = new OpenAI({ apiKey: secret, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const results: { status: number; requestId: string | null }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
        results.push({ status: response.status, requestId: response.headers.get('x-request-id') });
      } catch (error) {
        results.push({ status: (error as { status?: number }).status ?? 0, requestId: null });
      }
      await sleep(20);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return results;
    },
  };
}

/** Request ids the database holds a log record for. */
async function loggedRequestIds(databaseUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string }>('select request_id from request_logs');
    return new Set(rows.map((row) => restoredRequestId(row.request_id)));
  } finally {
    await client.end();
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('which storage errors are an outage', () => {
  const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

  test('a database that is away, too busy or too slow is a 503 storage_unavailable with Retry-After', () => {
    const outages = [
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('08006'),
      coded('53300', 'too many connections'),
      coded('57014', 'canceling statement due to statement timeout'),
      coded('SQLITE_BUSY'),
      coded('SQLITE_IOERR_WRITE'),
      coded('SQLITE_FULL'),
      new Error('could not migrate the database: connect ECONNREFUSED', { cause: coded('ECONNREFUSED') }),
    ];
    for (const error of outages) {
      assert.equal(isStorageUnavailable(error), true, error.message);
      const mapped = toGatewayError(error, 1024);
      assert.equal(mapped.code, 'storage_unavailable', error.message);
      assert.equal(mapped.status, 503);
      assert.equal(mapped.retryAfterSeconds, 5);
    }
  });

  test('a fault in the statement or in the gateway stays a 500 internal_error', () => {
    const bugs = [
      coded('42601', 'syntax error at or near "selec"'),
      coded('42P01', 'relation "nope" does not exist'),
      coded('23505', 'duplicate key value violates unique constraint'),
      coded('SQLITE_CONSTRAINT_UNIQUE'),
      coded('SQLITE_ERROR', 'no such table: nope'),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      new Error('database migration 0004 failed: column exists'),
    ];
    for (const error of bugs) {
      assert.equal(isStorageUnavailable(error), false, error.message);
      assert.equal(toGatewayError(error, 1024).code, 'internal_error', error.message);
    }
  });
});

describe('PostgreSQL faults under traffic', { skip }, () => {
  test('a database that goes silent and then resets its connections does not end the gateway; chat keeps working, the admin API answers 503, and every record is written once it is back', { timeout: 90_000 }, async () => {
    const setup = await setUp();
    const server = await startServeProcess(setup.env);
    try {
      const secret = await createChatKey(server);
      const traffic = chatTraffic(server, secret);
      await sleep(500);

      // A failover: connections hang, then the old server's connections are reset and it is away for a while.
      setup.proxy.silence();
      await sleep(3_000);
      setup.proxy.refuse();
      await sleep(500);
      assert.equal(server.child.exitCode, null, `the gateway exited:\n${server.output()}`);

      const listed = await admin(server, '/admin/v1/keys');
      assert.equal(listed.status, 503);
      assert.equal(listed.headers.get('retry-after'), '5');
      const body = (await listed.json()) as { error: { code: string; type: string; message: string } };
      assert.equal(body.error.code, 'storage_unavailable');
      assert.equal(body.error.type, 'api_error');
      assert.match(body.error.message, /database is not reachable/);
      await sleep(1_000);

      setup.proxy.restore();
      await waitFor('the admin API to answer again', async () => (await admin(server, '/admin/v1/keys')).status === 200);
      await sleep(300);
      const results = await traffic.stop();

      assert.equal(server.child.exitCode, null, `the gateway exited:\n${server.output()}`);
      assert.ok(results.length > 20, `only ${results.length} chats were sent`);
      assert.deepEqual(
        results.filter((result) => result.status !== 200),
        [],
        'every chat is answered while the database is away',
      );
      const expected = results.map((result) => result.requestId!);
      await waitFor('every queued record to be written', async () => {
        const logged = await loggedRequestIds(setup.database.url);
        return expected.every((id) => logged.has(id));
      });
      assert.doesNotMatch(server.output(), /an error no code handled/);
      assert.equal(await server.stop(), 0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await tearDown(setup);
    }
  });

  test('a gateway started while the database is away waits for it, saying what it waits for, and starts once it answers', { timeout: 90_000 }, async () => {
    const setup = await setUp();
    setup.proxy.refuse();
    const starting = startServeProcess(setup.env);
    let server: ServeProcess | undefined;
    try {
      await waitFor('a second attempt to reach the database', async () => setup.proxy.refusals >= 2, 60_000);
      setup.proxy.restore();
      server = await starting;
      assert.match(server.output(), /waiting for the database \(PostgreSQL at 127\.0\.0\.1:\d+\/modelgate_test_\w+\); next attempt in 1 s/);
      assert.doesNotMatch(server.output(), /postgres:\/\//, 'the log names the database without its URL');
      assert.equal((await admin(server, '/admin/v1/keys')).status, 200);
      assert.equal(await server.stop(), 0);
    } finally {
      setup.proxy.restore();
      server ??= await starting.catch(() => undefined);
      if (server !== undefined && server.child.exitCode === null) server.child.kill('SIGKILL');
      await tearDown(setup);
    }
  });

  test(
    'with two workers, a worker that ends while the database is away is replaced by one that waits for the database instead of dying',
    { timeout: 120_000, skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false },
    async () => {
      const setup = await setUp();
      // The primary itself is spawned (no launcher in between), so its children are the workers.
      const server = await startServeProcess({ ...setup.env, MODELGATE_WORKERS: '2', REDIS_URL: REDIS_URL!, MODELGATE_RELAUNCH: 'false' });
      try {
        const secret = await createChatKey(server);
        const client = new OpenAI({ apiKey: secret, baseURL: `${server.url}/v1`, maxRetries: 0 });
        // Connections are spread over the workers; both must know the key before the database goes.
        let answered = 0;
        await waitFor('both workers to know the key', async () => {
          const ok = await client.chat.completions
            .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, { headers: { connection: 'close' } })
            .then(() => true, () => false);
          answered = ok ? answered + 1 : 0;
          return answered >= 10;
        });
        const workerPids = async () => {
          const metrics = await (await admin(server, '/metrics')).text();
          return new Set([...metrics.matchAll(/worker="(\d+)"/g)].map((match) => match[1]!));
        };
        await waitFor('both workers to report metrics', async () => (await workerPids()).size === 2);
        setup.proxy.refuse();
        // Kill a worker; the primary starts a new one, which cannot reach the database.
        const children = execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' }).trim().split('\n');
        process.kill(Number(children[0]), 'SIGKILL');
        await waitFor('the new worker to wait for the database', async () => /waiting for the database/.test(server.output()));
        const traffic = chatTraffic(server, secret);
        await sleep(1_500);
        setup.proxy.restore();
        await waitFor('the new worker to start', async () => {
          const ids = await workerPids();
          return ids.size === 2 && [...ids].some((id) => Number(id) > 2); // cluster ids: 1 and 2 at start, 3 for the replacement
        }, 60_000);
        const results = await traffic.stop();
        assert.deepEqual(results.filter((result) => result.status !== 200), [], 'the surviving worker kept answering');
        assert.doesNotMatch(server.output(), /exited before it was ready/);
        assert.equal(await server.stop(), 0);
      } finally {
        setup.proxy.restore();
        if (server.child.exitCode === null) server.child.kill('SIGKILL');
        await tearDown(setup);
      }
    },
  );
});
