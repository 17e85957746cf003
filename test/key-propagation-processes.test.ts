import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { POSTGRES_URL, createPostgresDatabase } from './helpers/databases.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';

const ADMIN_TOKEN = 'mg-admin-propagation-test-0123456789';
const REDIS_URL = process.env.TEST_REDIS_URL;
/** Nothing listens here: a Redis the gateway can never reach. */
const UNREACHABLE_REDIS_URL = 'redis://127.0.0.1:1';
/** Far longer than any wait below: a change seen in time came through a channel (or, for a new key, a lookup). */
const REFRESH_MS = 600_000;
/** How long a change may take to be seen everywhere before the test fails; the refresh interval is 60 times longer. */
const CHANNEL_DEADLINE_MS = 10_000;
/** Answers in a row that must agree: new connections are spread over the workers, so both have answered. */
const AGREEING_ANSWERS = 6;
const ROUNDS = 25;

interface Answer {
  status: number;
  code: string | undefined;
}

/** A keyed request on a new connection (so `serve --workers` hands each to the next worker). */
async function use(url: string, secret: string): Promise<Answer> {
  const response = await fetch(`${url}/v1/utils/encrypt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ text: 'hello' }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

async function admin(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: { id: string; secret: string } }> {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, connection: 'close', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as { id: string; secret: string } };
}

async function expectEverywhere(url: string, secret: string, expected: Answer): Promise<void> {
  const deadline = Date.now() + CHANNEL_DEADLINE_MS;
  let agreeing = 0;
  let last: Answer | undefined;
  while (agreeing < AGREEING_ANSWERS) {
    assert.ok(Date.now() < deadline, `still ${JSON.stringify(last)} after ${CHANNEL_DEADLINE_MS} ms, expected ${JSON.stringify(expected)}`);
    last = await use(url, secret);
    agreeing = last.status === expected.status && last.code === expected.code ? agreeing + 1 : 0;
    if (agreeing === 0) await sleep(20);
  }
}

/** The gateway's environment: its data dir, the long refresh interval, and `extra`. */
function gatewayEnv(extra: Record<string, string>): { env: Record<string, string>; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-propagation-'));
  const configPath = join(dir, 'modelgate.yaml');
  writeFileSync(configPath, `keys:\n  cacheRefreshMs: ${REFRESH_MS}\n`);
  return {
    env: {
      MODELGATE_PORT: '0',
      MODELGATE_DATA_DIR: join(dir, 'data'),
      MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      MODELGATE_LOG_LEVEL: 'error',
      MODELGATE_CONFIG: configPath,
      ...extra,
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A key created through `creator` and used at once through `user`, many times; then paused,
 * resumed and revoked through `creator` and seen so through `user` long before any refresh.
 */
async function createUsePauseRevoke(creator: string, user: string): Promise<void> {
  for (let round = 0; round < ROUNDS; round += 1) {
    const created = await admin(creator, 'POST', '/keys', { name: `round-${round}`, scopes: ['utils:crypto'] });
    assert.equal(created.status, 201);
    assert.deepEqual(await use(user, created.body.secret), { status: 200, code: undefined }, `round ${round}: the new key was refused`);
  }
  const { body: key } = await admin(creator, 'POST', '/keys', { name: 'changed', scopes: ['utils:crypto'] });
  await expectEverywhere(user, key.secret, { status: 200, code: undefined });
  assert.equal((await admin(creator, 'POST', `/keys/${key.id}/pause`)).status, 200);
  await expectEverywhere(user, key.secret, { status: 403, code: 'key_paused' });
  assert.equal((await admin(creator, 'POST', `/keys/${key.id}/resume`)).status, 200);
  await expectEverywhere(user, key.secret, { status: 200, code: undefined });
  assert.equal((await admin(creator, 'POST', `/keys/${key.id}/revoke`)).status, 200);
  await expectEverywhere(user, key.secret, { status: 403, code: 'key_revoked' });
}

const NEEDS_POSTGRES_AND_REDIS =
  CLI_NOT_BUILT || (POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false);

describe('two gateway processes on PostgreSQL and Redis', { skip: NEEDS_POSTGRES_AND_REDIS }, () => {
  let database: { url: string; drop(): Promise<void> };
  const settings: { dispose(): void }[] = [];
  const gateways: ServeProcess[] = [];

  before(async () => {
    database = await createPostgresDatabase();
    for (let index = 0; index < 2; index += 1) {
      const setting = gatewayEnv({
        DATABASE_URL: database.url,
        MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        REDIS_URL: REDIS_URL!,
        MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
      });
      settings.push(setting);
      gateways.push(await startServeProcess(setting.env));
    }
  });
  after(async () => {
    for (const gateway of gateways) assert.equal(await gateway.stop(), 0);
    for (const setting of settings) setting.dispose();
    await database?.drop();
  });

  test('a key created on one works on the other at once; pause and revoke reach it long before the refresh interval', async () => {
    await createUsePauseRevoke(gateways[0]!.url, gateways[1]!.url);
  });
});

describe('serve --workers 2 on the embedded SQLite database', { skip: CLI_NOT_BUILT }, () => {
  let server: ServeProcess;
  let setting: { dispose(): void };

  before(async () => {
    // Redis out of reach: the only thing the workers share that carries messages is their primary.
    setting = gatewayEnv({ MODELGATE_WORKERS: '2', REDIS_URL: UNREACHABLE_REDIS_URL });
    server = await startServeProcess((setting as ReturnType<typeof gatewayEnv>).env);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    setting.dispose();
  });

  test('a key created through one worker works on the other at once; pause and revoke reach it long before the refresh interval', async () => {
    await createUsePauseRevoke(server.url, server.url);
  });
});
