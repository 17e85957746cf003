import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { GatewayError } from '../src/errors/index.js';
import { openStorage, type Storage } from '../src/storage/index.js';
import {
  Authenticator,
  KeyCache,
  KeyStore,
  assertModelAllowed,
  generateSecret,
  hashSecret,
  looksLikeSecret,
  nextStatus,
  type KeyAction,
  type KeyRow,
  type KeyStatus,
  type NewKey,
  type Principal,
} from '../src/keys/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';

const silent = pino({ level: 'silent' });

function newKey(overrides: Partial<NewKey> = {}): NewKey {
  return {
    name: 'unit',
    projectId: 'default',
    scopes: ['model:request'],
    limits: { rpm: null, dailyTokens: null, monthlyCostUsd: null },
    allowedModels: null,
    ...overrides,
  };
}

/** Asserts `run` throws a GatewayError with this code (and so its documented status and type). */
function assertGatewayError(run: () => unknown, code: string, status: number, type: string): GatewayError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof GatewayError, `expected a GatewayError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code);
  assert.equal(caught.status, status);
  assert.equal(caught.type, type);
  return caught;
}

/** Like assertGatewayError, for authentication: a key the cache does not hold is refused once the store answers. */
async function assertRefused(run: () => unknown, code: string, status: number, type: string): Promise<GatewayError> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  return assertGatewayError(() => {
    throw caught;
  }, code, status, type);
}

describe('key state machine', () => {
  const expected: Record<KeyStatus, Record<KeyAction, KeyStatus | 'conflict'>> = {
    active: { pause: 'paused', resume: 'conflict', revoke: 'revoked' },
    paused: { pause: 'conflict', resume: 'active', revoke: 'revoked' },
    revoked: { pause: 'conflict', resume: 'conflict', revoke: 'conflict' },
  };
  for (const [from, actions] of Object.entries(expected) as [KeyStatus, Record<KeyAction, KeyStatus | 'conflict'>][]) {
    for (const [action, to] of Object.entries(actions) as [KeyAction, KeyStatus | 'conflict'][]) {
      test(`${action} on a ${from} key → ${to}`, () => {
        if (to === 'conflict') {
          const error = assertGatewayError(() => nextStatus(from, action), 'conflict', 409, 'invalid_request_error');
          if (from === 'revoked') assert.match(error.message, /revocation is final/);
        } else {
          assert.equal(nextStatus(from, action), to);
        }
      });
    }
  }
});

describe('secrets', () => {
  test('sk-mg- followed by at least 32 base62 characters, never repeated', () => {
    const secrets = new Set(Array.from({ length: 200 }, () => generateSecret()));
    assert.equal(secrets.size, 200);
    for (const secret of secrets) {
      assert.match(secret, /^sk-mg-[0-9A-Za-z]{32,}$/);
      assert.ok(looksLikeSecret(secret));
    }
    assert.equal(looksLikeSecret('sk-mg-short'), false);
  });
});

describe('key store, cache and authenticator', () => {
  let dir: string;
  let storage: Storage;
  let store: KeyStore;
  let cache: KeyCache;
  let strict: Authenticator;
  let open: Authenticator;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'modelgate-keys-'));
    storage = await openStorage({ dataDir: dir });
    store = new KeyStore(storage.db);
    cache = new KeyCache(store, silent);
    await cache.load();
    strict = new Authenticator(cache, { requireKeys: true });
    open = new Authenticator(cache, { requireKeys: false });
  });
  after(async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function created(overrides: Partial<NewKey> = {}): Promise<{ row: KeyRow; secret: string }> {
    const result = await store.create(newKey(overrides));
    cache.put(result.row);
    return result;
  }

  test('only the SHA-256 hash and last 4 characters of the secret are stored', async () => {
    const { row, secret } = await created();
    const stored = await storage.db.selectFrom('api_keys').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    assert.equal(stored.secret_hash, createHash('sha256').update(secret).digest('hex'));
    assert.equal(stored.last4, secret.slice(-4));
    const body = secret.slice('sk-mg-'.length);
    for (const [column, value] of Object.entries(stored)) {
      assert.ok(!String(value).includes(body.slice(0, 16)), `column ${column} holds part of the secret`);
    }
  });

  test('Bearer and X-API-Key both authenticate', async () => {
    const { row, secret } = await created();
    // A proxy's own credentials in another Authorization scheme do not hide a key sent as X-API-Key.
    const behindBasicAuth = { authorization: 'Basic dXNlcjpwYXNzd29yZA==', 'x-api-key': secret };
    for (const headers of [{ authorization: `Bearer ${secret}` }, { authorization: `bearer ${secret}` }, { 'x-api-key': secret }, behindBasicAuth]) {
      const principal = await strict.authenticate(headers, 'model:request');
      assert.equal(principal.kind, 'key');
      assert.equal(principal.kind === 'key' && principal.keyId, row.id);
    }
  });

  test('each failure has its documented status and code', async () => {
    const { row, secret } = await created({ scopes: ['utils:crypto'] });
    const bearer = { authorization: `Bearer ${secret}` };
    await assertRefused(() => strict.authenticate({}, 'utils:crypto'), 'missing_api_key', 401, 'authentication_error');
    await assertRefused(() => strict.authenticate({ authorization: `Bearer ${generateSecret()}` }, 'utils:crypto'), 'invalid_api_key', 401, 'authentication_error');
    await assertRefused(() => strict.authenticate({ authorization: 'Basic abc' }, 'utils:crypto'), 'invalid_api_key', 401, 'authentication_error');
    await assertRefused(() => strict.authenticate(bearer, 'model:request'), 'insufficient_scope', 403, 'permission_error');
    cache.put(await store.transition(row.id, 'pause'));
    await assertRefused(() => strict.authenticate(bearer, 'utils:crypto'), 'key_paused', 403, 'permission_error');
    cache.put(await store.transition(row.id, 'resume'));
    assert.equal((await strict.authenticate(bearer, 'utils:crypto')).kind, 'key');
    cache.put(await store.transition(row.id, 'revoke'));
    await assertRefused(() => strict.authenticate(bearer, 'utils:crypto'), 'key_revoked', 403, 'permission_error');
  });

  test('the migration window lets keyless calls in as anonymous but still rejects a wrong or paused key', async () => {
    const { row, secret } = await created();
    assert.deepEqual(await open.authenticate({}, 'model:request'), { kind: 'anonymous', fingerprint: 'anonymous' });
    await assertRefused(() => open.authenticate({ 'x-api-key': 'sk-mg-wrong' }, 'model:request'), 'invalid_api_key', 401, 'authentication_error');
    assert.equal((await open.authenticate({ 'x-api-key': secret }, 'model:request')).kind, 'key');
    cache.put(await store.transition(row.id, 'pause'));
    await assertRefused(() => open.authenticate({ 'x-api-key': secret }, 'model:request'), 'key_paused', 403, 'permission_error');
  });

  test('allowedModels restricts a key to the listed ids or aliases', async () => {
    const { secret } = await created({ allowedModels: ['service-1', 'gpt-4o-mini'] });
    const principal = await strict.authenticate({ 'x-api-key': secret }, 'model:request');
    assertModelAllowed(principal, 'service-1', 'claude-sonnet-4-5');
    assertModelAllowed(principal, 'gpt-4o-mini', 'gpt-4o-mini');
    assertModelAllowed(principal, 'gpt-mini-alias', 'gpt-4o-mini');
    const error = assertGatewayError(() => assertModelAllowed(principal, 'gpt-4o', 'gpt-4o'), 'model_not_allowed', 403, 'permission_error');
    assert.equal(error.param, 'model');
    const unrestricted = await strict.authenticate({ 'x-api-key': (await created()).secret }, 'model:request');
    assertModelAllowed(unrestricted, 'gpt-4o', 'gpt-4o');
    const anonymous: Principal = { kind: 'anonymous', fingerprint: 'anonymous' };
    assertModelAllowed(anonymous, 'gpt-4o', 'gpt-4o');
  });

  test('the cache never lets an older row replace a newer one', async () => {
    const { row, secret } = await created();
    const paused = await store.transition(row.id, 'pause');
    cache.put(paused);
    cache.put(row); // a refresh that read the table before the pause finishes late
    await assertRefused(() => strict.authenticate({ 'x-api-key': secret }, 'model:request'), 'key_paused', 403, 'permission_error');
  });

  test('a revoke written on a stale read still reaches caches that saw a change stamped by a clock ahead', async () => {
    const { row, secret } = await created();
    // Instance A, its clock 3 s ahead (the docs allow 5 s), renames the key while instance B is
    // between reading it and writing its revoke.
    const realNow = Date.now;
    Date.now = () => realNow() + 3_000;
    try {
      await store.update(row.id, { name: 'renamed on A' });
    } finally {
      Date.now = realNow;
    }
    await cache.refresh(); // a third instance's cache holds A's version
    const instanceB = new KeyStore(storage.db);
    const read = instanceB.get.bind(instanceB);
    instanceB.get = async () => {
      instanceB.get = read;
      return row; // what B read before A's change
    };
    await instanceB.transition(row.id, 'revoke');
    await cache.refresh();
    await assertRefused(() => strict.authenticate({ 'x-api-key': secret }, 'model:request'), 'key_revoked', 403, 'permission_error');
  });

  test('refresh picks up keys created and changed through another store (another instance)', async () => {
    const other = new KeyStore(storage.db);
    const { row, secret } = await other.create(newKey());
    await cache.refresh();
    assert.equal((await strict.authenticate({ 'x-api-key': secret }, 'model:request')).kind, 'key');
    await other.transition(row.id, 'revoke');
    await cache.refresh();
    await assertRefused(() => strict.authenticate({ 'x-api-key': secret }, 'model:request'), 'key_revoked', 403, 'permission_error');
  });
});

describe('authentication over HTTP', () => {
  let gateway: TestGateway;
  let keyless: TestGateway;

  before(async () => {
    gateway = await startTestGateway({ routes: [probeRoutes] });
    keyless = await startTestGateway({ routes: [probeRoutes], env: { MODELGATE_REQUIRE_KEYS: 'false' } });
  });
  after(async () => {
    await gateway.close();
    await keyless.close();
  });

  interface ProbeAnswer {
    kind?: string;
    error?: { message: string; type: string; code: string; request_id: string };
  }

  async function call(target: TestGateway, headers: Record<string, string>) {
    const response = await fetch(`${target.url}${probePath('utils:crypto')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{}',
    });
    return { status: response.status, requestId: response.headers.get('x-request-id'), body: (await response.json()) as ProbeAnswer };
  }

  async function assertRejected(target: TestGateway, headers: Record<string, string>, status: number, type: string, code: string) {
    const { status: actual, requestId, body } = await call(target, headers);
    assert.equal(actual, status, JSON.stringify(body));
    assert.equal(body.error?.type, type);
    assert.equal(body.error?.code, code);
    assert.ok((body.error?.message.length ?? 0) > 0);
    assert.ok(requestId !== null && requestId.length > 0);
    assert.equal(body.error?.request_id, requestId);
  }

  test('a valid key passes with Bearer and with X-API-Key', async () => {
    const secret = await gateway.createKey({ scopes: ['utils:crypto'] });
    const variants: Record<string, string>[] = [{ authorization: `Bearer ${secret}` }, { 'x-api-key': secret }];
    for (const headers of variants) {
      const { status, body } = await call(gateway, headers);
      assert.equal(status, 200);
      assert.equal(body.kind, 'key');
    }
  });

  test('missing, invalid, paused, revoked and out-of-scope keys', async () => {
    await assertRejected(gateway, {}, 401, 'authentication_error', 'missing_api_key');
    await assertRejected(gateway, { authorization: `Bearer ${generateSecret()}` }, 401, 'authentication_error', 'invalid_api_key');
    await assertRejected(gateway, { 'x-api-key': 'not-a-key' }, 401, 'authentication_error', 'invalid_api_key');

    const outOfScope = await gateway.createKey({ scopes: ['model:request'] });
    await assertRejected(gateway, { authorization: `Bearer ${outOfScope}` }, 403, 'permission_error', 'insufficient_scope');

    const secret = await gateway.createKey({ scopes: ['utils:crypto'] });
    const { store, cache } = gateway.gateway.context.keys;
    const row = cache.findByHash(hashSecret(secret))!;
    cache.put(await store.transition(row.id, 'pause'));
    await assertRejected(gateway, { 'x-api-key': secret }, 403, 'permission_error', 'key_paused');
    cache.put(await store.transition(row.id, 'revoke'));
    await assertRejected(gateway, { 'x-api-key': secret }, 403, 'permission_error', 'key_revoked');
  });

  test('the admin token is not a model key', async () => {
    await assertRejected(gateway, { authorization: `Bearer ${gateway.gateway.secrets.adminToken}` }, 401, 'authentication_error', 'invalid_api_key');
  });

  test('with MODELGATE_REQUIRE_KEYS=false a keyless call is anonymous but a wrong key is still rejected', async () => {
    const { status, body } = await call(keyless, {});
    assert.equal(status, 200);
    assert.equal(body.kind, 'anonymous');
    await assertRejected(keyless, { authorization: `Bearer ${generateSecret()}` }, 401, 'authentication_error', 'invalid_api_key');
  });
});
