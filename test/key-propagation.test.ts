import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminKeysRoutes } from '../src/server/routes/admin-keys.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/** The bound: a pause or revoke on one instance holds on every instance within 2 s. */
const PROPAGATION_BOUND_MS = 2_000;
/** A refresh interval no test waits for: a change seen sooner came through a channel, or a lookup. */
const NEVER_REFRESH = { keys: { cacheRefreshMs: 600_000 } };
const REDIS_URL = process.env.TEST_REDIS_URL;

async function probeStatus(gateway: TestGateway, secret: string): Promise<{ status: number; code: string | undefined }> {
  const response = await fetch(`${gateway.url}${probePath('model:request')}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

/** Polls gateway B until the key gives the expected answer; fails if that takes longer than the bound. */
async function expectWithinBound(gateway: TestGateway, secret: string, expected: { status: number; code?: string }): Promise<void> {
  const deadline = Date.now() + PROPAGATION_BOUND_MS;
  let last = await probeStatus(gateway, secret);
  while ((last.status !== expected.status || last.code !== expected.code) && Date.now() < deadline) {
    await sleep(50);
    last = await probeStatus(gateway, secret);
  }
  assert.deepEqual(last, { status: expected.status, code: expected.code }, `gateway B still answered ${JSON.stringify(last)} after ${PROPAGATION_BOUND_MS} ms`);
}

async function createdOn(gateway: TestGateway, scopes = ['model:request']): Promise<{ id: string; secret: string }> {
  const created = await gateway.admin('POST', '/admin/v1/keys', { name: 'shared', scopes });
  assert.equal(created.status, 201);
  return created.body as { id: string; secret: string };
}

/** Two gateways on one storage: B is what a load balancer sends the next request to. */
function twoInstances(storageOf: () => Promise<SharedStorage>, configFile?: Record<string, unknown>, env: Record<string, string> = {}) {
  const instances = { storage: undefined as SharedStorage | undefined, a: undefined as TestGateway | undefined, b: undefined as TestGateway | undefined };
  before(async () => {
    instances.storage = await storageOf();
    const options = {
      env: { ...instances.storage.env, ...env },
      dataDir: instances.storage.dataDir,
      routes: [adminKeysRoutes, probeRoutes],
      ...(configFile !== undefined ? { configFile } : {}),
    };
    instances.a = await startTestGateway(options);
    instances.b = await startTestGateway(options);
  });
  after(async () => {
    await instances.a?.close();
    await instances.b?.close();
    await instances.storage?.dispose();
  });
  return instances as { storage: SharedStorage; a: TestGateway; b: TestGateway };
}

/** Pause, resume, revoke and a scope change made on A, each honoured by B. */
async function changesReachB(a: TestGateway, b: TestGateway): Promise<void> {
  const { id, secret } = await createdOn(a);
  assert.equal((await probeStatus(b, secret)).status, 200);

  assert.equal((await a.admin('POST', `/admin/v1/keys/${id}/pause`)).status, 200);
  await expectWithinBound(b, secret, { status: 403, code: 'key_paused' });

  assert.equal((await a.admin('POST', `/admin/v1/keys/${id}/resume`)).status, 200);
  await expectWithinBound(b, secret, { status: 200 });

  assert.equal((await a.admin('PATCH', `/admin/v1/keys/${id}`, { scopes: ['utils:crypto'] })).status, 200);
  await expectWithinBound(b, secret, { status: 403, code: 'insufficient_scope' });

  assert.equal((await a.admin('POST', `/admin/v1/keys/${id}/revoke`)).status, 200);
  await expectWithinBound(b, secret, { status: 403, code: 'key_revoked' });
}

for (const backend of STORAGE_BACKENDS) {
  describe(`a key created on one instance works on every other at once (${backend.name}, no refresh)`, { skip: backend.skip }, () => {
    const instances = twoInstances(() => backend.create(), NEVER_REFRESH);

    test('created on A, used on B immediately, many times over', async () => {
      for (let round = 0; round < 25; round += 1) {
        const [creator, user] = round % 2 === 0 ? [instances.a, instances.b] : [instances.b, instances.a];
        const { secret } = await createdOn(creator);
        assert.deepEqual(await probeStatus(user, secret), { status: 200, code: undefined }, `round ${round}`);
      }
    });
  });
}

const sqlite = STORAGE_BACKENDS.find((backend) => backend.name === 'SQLite')!;
describe('key changes reach every instance on the refresh interval, without a channel (SQLite, no Redis)', () => {
  const instances = twoInstances(() => sqlite.create());

  test('a key paused, resumed, narrowed and revoked on A is honoured by B', async () => {
    await changesReachB(instances.a, instances.b);
  });
});

const postgres = STORAGE_BACKENDS.find((backend) => backend.name === 'PostgreSQL')!;
describe('key changes reach every instance through PostgreSQL notifications, long before the refresh interval', { skip: postgres.skip }, () => {
  const instances = twoInstances(() => postgres.create(), NEVER_REFRESH);

  test('a key paused, resumed, narrowed and revoked on A is honoured by B', async () => {
    await changesReachB(instances.a, instances.b);
  });
});

describe('key changes reach every instance through Redis, long before the refresh interval', { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, () => {
  const instances = twoInstances(() => sqlite.create(), NEVER_REFRESH, { REDIS_URL: REDIS_URL! });

  test('a key paused, resumed, narrowed and revoked on A is honoured by B', async () => {
    await changesReachB(instances.a, instances.b);
  });
});
