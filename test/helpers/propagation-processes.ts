import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Key propagation between real gateway processes: what both the instances and the workers tests run. */

const ADMIN_TOKEN = 'mg-admin-propagation-test-0123456789';
/** Nothing listens here: a Redis the gateway can never reach. */
export const UNREACHABLE_REDIS_URL = 'redis://127.0.0.1:1';
/** Far longer than any wait below: a change seen in time came through a channel (or, for a new key, a lookup). */
const REFRESH_MS = 600_000;
/** How long a change may take to be seen everywhere before the test fails; the refresh interval is 60 times longer. */
const CHANNEL_DEADLINE_MS = 10_000;
/** Answers in a row that must agree: new connections are spread over the workers, so both have answered. */
const AGREEING_ANSWERS = 6;
const ROUNDS = 20;

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
export function gatewayEnv(extra: Record<string, string>): { env: Record<string, string>; dispose(): void } {
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
export async function createUsePauseRevoke(creator: string, user: string): Promise<void> {
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
