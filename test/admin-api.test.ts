import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminKeysRoutes } from '../src/server/routes/admin-keys.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';

let gateway: TestGateway;

before(async () => {
  gateway = await startTestGateway({ routes: [adminKeysRoutes, probeRoutes] });
});
after(async () => {
  await gateway.close();
});

async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(`${gateway.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  return { status: response.status, requestId: response.headers.get('x-request-id'), text, body: text.length > 0 ? JSON.parse(text) : null };
}

async function createKey(body: Record<string, unknown>) {
  const response = await gateway.admin('POST', '/admin/v1/keys', body);
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

async function probe(secret: string, scope: Parameters<typeof probePath>[0] = 'model:request') {
  return send('POST', probePath(scope), { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, '{}');
}

interface ErrorAnswer {
  status: number;
  body: { error: { code: string; message: string } };
}

function assertError(response: ErrorAnswer, status: number, code: string, messagePattern?: RegExp) {
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.error.code, code);
  if (messagePattern !== undefined) assert.match(response.body.error.message, messagePattern);
}

describe('admin authentication', () => {
  test('no token → 401 missing_api_key with the documented error body', async () => {
    const response = await send('GET', '/admin/v1/keys', {});
    assertError(response, 401, 'missing_api_key', /admin token/);
    assert.equal(response.body.error.type, 'authentication_error');
    assert.equal(response.body.error.request_id, response.requestId);
  });

  test('a wrong token → 401 invalid_api_key', async () => {
    const response = await send('GET', '/admin/v1/keys', { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` });
    assertError(response, 401, 'invalid_api_key');
    assert.equal(response.body.error.type, 'authentication_error');
  });

  test('the admin token only counts as Authorization: Bearer', async () => {
    assertError(await send('GET', '/admin/v1/keys', { 'x-api-key': TEST_ADMIN_TOKEN }), 401, 'missing_api_key');
    assertError(await send('GET', '/admin/v1/keys', { authorization: `Basic ${TEST_ADMIN_TOKEN}` }), 401, 'invalid_api_key');
  });

  test('a model key never works on the admin API, and the admin token never works on model routes', async () => {
    const { secret } = await createKey({ name: 'separation', scopes: ['model:request', 'utils:crypto', 'agents:execute'] });
    assertError(await send('GET', '/admin/v1/keys', { authorization: `Bearer ${secret}` }), 401, 'invalid_api_key', /not accepted by the admin API/);
    assertError(await send('POST', '/admin/v1/keys/x/pause', { 'x-api-key': secret }), 401, 'missing_api_key');
    assertError(await probe(TEST_ADMIN_TOKEN), 401, 'invalid_api_key');
    assert.equal((await probe(secret)).status, 200);
  });

  test('the failure happens before the body is read', async () => {
    const response = await send('POST', '/admin/v1/keys', { 'content-type': 'application/json' }, '{not json');
    assertError(response, 401, 'missing_api_key');
  });
});

describe('keys', () => {
  test('create → 201 with the view and the secret, which then works on keyed routes', async () => {
    const key = await createKey({
      name: 'ci',
      scopes: ['model:request', 'utils:crypto'],
      limits: { rpm: 60, daily_tokens: 100000, monthly_cost_usd: 12.5 },
      allowed_models: ['service-1', 'gpt-4o-mini'],
    });
    assert.match(key.id, /^key_/);
    assert.match(key.secret, /^sk-mg-[0-9A-Za-z]{32,}$/);
    assert.equal(key.name, 'ci');
    assert.equal(key.project_id, 'default');
    assert.equal(key.status, 'active');
    assert.deepEqual(key.scopes, ['model:request', 'utils:crypto']);
    assert.deepEqual(key.limits, { rpm: 60, daily_tokens: 100000, monthly_cost_usd: 12.5 });
    assert.deepEqual(key.allowed_models, ['service-1', 'gpt-4o-mini']);
    assert.equal(key.fingerprint, `${key.id}…${key.secret.slice(-4)}`);
    assert.equal((await probe(key.secret, 'utils:crypto')).status, 200);
    assertError(await probe(key.secret, 'agents:execute'), 403, 'insufficient_scope');
  });

  test('defaults: project default, no limits, any model', async () => {
    const key = await createKey({ name: 'plain', scopes: ['utils:crypto'] });
    assert.equal(key.project_id, 'default');
    assert.deepEqual(key.limits, { rpm: null, daily_tokens: null, monthly_cost_usd: null });
    assert.equal(key.allowed_models, null);
  });

  test('list and show never return the secret or its hash', async () => {
    const key = await createKey({ name: 'hidden', scopes: ['model:request'] });
    const [row] = await gateway.gateway.storage.db.selectFrom('api_keys').select('secret_hash').where('id', '=', key.id).execute();
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const list = await send('GET', '/admin/v1/keys', headers);
    const show = await send('GET', `/admin/v1/keys/${key.id}`, headers);
    assert.equal(list.status, 200);
    assert.equal(show.status, 200);
    for (const text of [list.text, show.text]) {
      assert.ok(!text.includes(key.secret));
      assert.ok(!text.includes(row!.secret_hash));
      assert.ok(!text.includes('"secret'));
    }
    const { secret: _secret, ...view } = key;
    assert.deepEqual(show.body, view);
    assert.equal(list.body.object, 'list');
    assert.ok(list.body.data.some((item: { id: string }) => item.id === key.id));
  });

  test('list filters by project', async () => {
    const key = await createKey({ name: 'team', project: 'team-a', scopes: ['model:request'] });
    const list = await gateway.admin('GET', '/admin/v1/keys?project=team-a');
    assert.deepEqual(list.body.data.map((item: { id: string }) => item.id), [key.id]);
    assert.deepEqual((await gateway.admin('GET', '/admin/v1/keys?project=nobody')).body.data, []);
    assertError(await gateway.admin('GET', '/admin/v1/keys?project=Bad!'), 400, 'invalid_body', /querystring\.project/);
    assertError(await gateway.admin('GET', '/admin/v1/keys?owner=x'), 400, 'invalid_body', /querystring\.owner is not a recognised field/);
  });

  test('show an unknown key → 404 not_found', async () => {
    assertError(await gateway.admin('GET', '/admin/v1/keys/key_0000000000000000'), 404, 'not_found', /key_0000000000000000/);
    assertError(await gateway.admin('POST', '/admin/v1/keys/key_missing/pause'), 404, 'not_found');
    assertError(await gateway.admin('PATCH', '/admin/v1/keys/key_missing', { name: 'x' }), 404, 'not_found');
  });

  test('create validation names the field', async () => {
    const cases: [Record<string, unknown>, RegExp, string | null][] = [
      [{ name: 'x', scopes: ['model:request'], owner: 'me' }, /body\.owner is not a recognised field/, 'owner'],
      [{ scopes: ['model:request'] }, /body\.name is required/, 'name'],
      [{ name: 'x' }, /body\.scopes is required/, 'scopes'],
      [{ name: 'x', scopes: [] }, /body\.scopes/, 'scopes'],
      [{ name: 'x', scopes: ['model:admin'] }, /body\.scopes\[0\] must be one of "model:request", "utils:crypto", "agents:execute"/, 'scopes[0]'],
      [{ name: 'x', scopes: ['model:request'], project: 'Not Valid' }, /body\.project must match pattern/, 'project'],
      [{ name: 'x', scopes: ['model:request'], limits: { rpm: 0 } }, /body\.limits\.rpm/, 'limits.rpm'],
      [{ name: 'x', scopes: ['model:request'], limits: { rpm: 1.5 } }, /body\.limits\.rpm/, 'limits.rpm'],
      [{ name: 'x', scopes: ['model:request'], limits: { monthly_cost_usd: -1 } }, /body\.limits\.monthly_cost_usd/, 'limits.monthly_cost_usd'],
      [{ name: 'x', scopes: ['model:request'], limits: { tpm: 5 } }, /body\.limits\.tpm is not a recognised field/, 'limits.tpm'],
      [{ name: 'x', scopes: ['model:request'], allowed_models: [] }, /body\.allowed_models/, 'allowed_models'],
      [{ name: '', scopes: ['model:request'] }, /body\.name/, 'name'],
    ];
    for (const [body, message, param] of cases) {
      const response = await gateway.admin('POST', '/admin/v1/keys', body);
      assertError(response, 400, 'invalid_body', message);
      assert.equal(response.body.error.type, 'invalid_request_error');
      assert.equal(response.body.error.param, param, JSON.stringify(body));
    }
  });

  test('malformed JSON → 400 and a non-JSON body → 415', async () => {
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    assertError(await send('POST', '/admin/v1/keys', { ...headers, 'content-type': 'application/json' }, '{"name":'), 400, 'invalid_body');
    assertError(await send('POST', '/admin/v1/keys', { ...headers, 'content-type': 'text/plain' }, 'name=x'), 415, 'unsupported_media_type');
  });

  test('pause, resume and revoke follow the state machine; revoked is final', async () => {
    const key = await createKey({ name: 'lifecycle', scopes: ['model:request'] });
    const path = `/admin/v1/keys/${key.id}`;

    const paused = await gateway.admin('POST', `${path}/pause`);
    assert.equal(paused.status, 200);
    assert.equal(paused.body.status, 'paused');
    assertError(await probe(key.secret), 403, 'key_paused');
    assertError(await gateway.admin('POST', `${path}/pause`), 409, 'conflict', /already paused/);

    const resumed = await gateway.admin('POST', `${path}/resume`);
    assert.equal(resumed.body.status, 'active');
    assert.equal((await probe(key.secret)).status, 200);
    assertError(await gateway.admin('POST', `${path}/resume`), 409, 'conflict', /already active/);

    const revoked = await gateway.admin('POST', `${path}/revoke`);
    assert.equal(revoked.body.status, 'revoked');
    assertError(await probe(key.secret), 403, 'key_revoked');
    for (const action of ['resume', 'pause', 'revoke']) {
      assertError(await gateway.admin('POST', `${path}/${action}`), 409, 'conflict', /revocation is final/);
    }
    assertError(await gateway.admin('PATCH', path, { name: 'again' }), 409, 'conflict', /revocation is final/);
    assert.equal((await gateway.admin('GET', path)).body.status, 'revoked');
  });

  test('a paused key can be revoked', async () => {
    const key = await createKey({ name: 'paused-then-revoked', scopes: ['model:request'] });
    await gateway.admin('POST', `/admin/v1/keys/${key.id}/pause`);
    assert.equal((await gateway.admin('POST', `/admin/v1/keys/${key.id}/revoke`)).body.status, 'revoked');
  });

  test('PATCH changes name, scopes, limits and allowed models; null clears a limit', async () => {
    const key = await createKey({ name: 'patch', scopes: ['model:request'], limits: { rpm: 10, daily_tokens: 500 } });
    const path = `/admin/v1/keys/${key.id}`;

    const changed = await gateway.admin('PATCH', path, {
      name: 'renamed',
      scopes: ['utils:crypto'],
      limits: { rpm: null, monthly_cost_usd: 3 },
      allowed_models: ['service-2'],
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.name, 'renamed');
    assert.deepEqual(changed.body.scopes, ['utils:crypto']);
    assert.deepEqual(changed.body.limits, { rpm: null, daily_tokens: 500, monthly_cost_usd: 3 });
    assert.deepEqual(changed.body.allowed_models, ['service-2']);
    assert.deepEqual((await gateway.admin('GET', path)).body, changed.body);
    // The new scopes apply on this instance at once.
    assertError(await probe(key.secret, 'model:request'), 403, 'insufficient_scope');
    assert.equal((await probe(key.secret, 'utils:crypto')).status, 200);

    const cleared = await gateway.admin('PATCH', path, { allowed_models: null, limits: { daily_tokens: null } });
    assert.equal(cleared.body.allowed_models, null);
    assert.deepEqual(cleared.body.limits, { rpm: null, daily_tokens: null, monthly_cost_usd: 3 });
    assert.equal(cleared.body.secret, undefined);
  });

  test('PATCH validation', async () => {
    const key = await createKey({ name: 'patch-validation', scopes: ['model:request'] });
    const path = `/admin/v1/keys/${key.id}`;
    assertError(await gateway.admin('PATCH', path, {}), 400, 'invalid_body', /at least one of/);
    assertError(await gateway.admin('PATCH', path, { status: 'active' }), 400, 'invalid_body', /body\.status is not a recognised field/);
    assertError(await gateway.admin('PATCH', path, { project: 'other' }), 400, 'invalid_body', /body\.project is not a recognised field/);
    assertError(await gateway.admin('PATCH', path, { scopes: ['admin'] }), 400, 'invalid_body', /must be one of/);
    assertError(await gateway.admin('PATCH', path, { limits: { rpm: 'ten' } }), 400, 'invalid_body', /body\.limits\.rpm/);
  });
});

describe('projects', () => {
  test('the default project exists', async () => {
    const list = await gateway.admin('GET', '/admin/v1/projects');
    assert.equal(list.status, 200);
    assert.equal(list.body.object, 'list');
    assert.ok(list.body.data.some((project: { id: string }) => project.id === 'default'));
  });

  test('create → 201; duplicates → 409; bad ids → 400', async () => {
    const created = await gateway.admin('POST', '/admin/v1/projects', { id: 'billing', name: 'Billing team' });
    assert.equal(created.status, 201);
    assert.equal(created.body.id, 'billing');
    assert.equal(created.body.name, 'Billing team');
    assert.ok(!Number.isNaN(Date.parse(created.body.created_at)));
    const list = await gateway.admin('GET', '/admin/v1/projects');
    assert.ok(list.body.data.some((project: { id: string }) => project.id === 'billing'));

    assertError(await gateway.admin('POST', '/admin/v1/projects', { id: 'billing' }), 409, 'conflict', /id "billing" already exists/);
    assertError(await gateway.admin('POST', '/admin/v1/projects', { id: 'billing-2', name: 'Billing team' }), 409, 'conflict', /already named/);
    for (const id of ['Billing', '-x', 'a b', 'a'.repeat(65), '']) {
      assertError(await gateway.admin('POST', '/admin/v1/projects', { id }), 400, 'invalid_body', /body\.id/);
    }
    assertError(await gateway.admin('POST', '/admin/v1/projects', { id: 'x', owner: 'y' }), 400, 'invalid_body', /body\.owner/);
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: 'a'.repeat(64) })).status, 201);
  });

  test('a key in a new project creates the project', async () => {
    await createKey({ name: 'k', project: 'fresh', scopes: ['model:request'] });
    const list = await gateway.admin('GET', '/admin/v1/projects');
    assert.ok(list.body.data.some((project: { id: string }) => project.id === 'fresh'));
  });

  test("a key in a project id that is only another project's name → 409, not a 500", async () => {
    await gateway.admin('POST', '/admin/v1/projects', { id: 'ops', name: 'support' });
    assertError(await gateway.admin('POST', '/admin/v1/keys', { name: 'k', project: 'support', scopes: ['model:request'] }), 409, 'conflict', /named "support"/);
  });
});

test('admin routes are not in /openapi.json', async () => {
  const document = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as { paths?: Record<string, unknown> };
  assert.ok(!Object.keys(document.paths ?? {}).some((path) => path.startsWith('/admin')));
});
