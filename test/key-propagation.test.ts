import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminKeysRoutes } from '../src/server/routes/admin-keys.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/** The bound: a pause or revoke on one instance holds on every instance within 2 s. */
const PROPAGATION_BOUND_MS = 2_000;

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

for (const backend of STORAGE_BACKENDS) {
  describe(`key changes reach every instance (${backend.name})`, { skip: backend.skip }, () => {
    let storage: SharedStorage;
    let gatewayA: TestGateway;
    let gatewayB: TestGateway;

    before(async () => {
      storage = await backend.create();
      const options = { env: storage.env, dataDir: storage.dataDir, routes: [adminKeysRoutes, probeRoutes] };
      gatewayA = await startTestGateway(options);
      gatewayB = await startTestGateway(options);
    });
    after(async () => {
      await gatewayA?.close();
      await gatewayB?.close();
      await storage?.dispose();
    });

    test('a key created, paused, resumed and revoked on A is honoured by B', async () => {
      const created = await gatewayA.admin('POST', '/admin/v1/keys', { name: 'shared', scopes: ['model:request'] });
      assert.equal(created.status, 201);
      const { id, secret } = created.body as { id: string; secret: string };
      await expectWithinBound(gatewayB, secret, { status: 200 });

      assert.equal((await gatewayA.admin('POST', `/admin/v1/keys/${id}/pause`)).status, 200);
      await expectWithinBound(gatewayB, secret, { status: 403, code: 'key_paused' });

      assert.equal((await gatewayA.admin('POST', `/admin/v1/keys/${id}/resume`)).status, 200);
      await expectWithinBound(gatewayB, secret, { status: 200 });

      assert.equal((await gatewayA.admin('POST', `/admin/v1/keys/${id}/revoke`)).status, 200);
      await expectWithinBound(gatewayB, secret, { status: 403, code: 'key_revoked' });
    });

    test('a scope change on B is honoured by A', async () => {
      const created = await gatewayB.admin('POST', '/admin/v1/keys', { name: 'scoped', scopes: ['model:request'] });
      const { id, secret } = created.body as { id: string; secret: string };
      await expectWithinBound(gatewayA, secret, { status: 200 });
      assert.equal((await gatewayB.admin('PATCH', `/admin/v1/keys/${id}`, { scopes: ['utils:crypto'] })).status, 200);
      await expectWithinBound(gatewayA, secret, { status: 403, code: 'insufficient_scope' });
    });
  });
}
