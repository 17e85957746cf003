import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VENDOR_PROVIDERS } from '../src/providers/index.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { createUsers, sendJson as send, signIn, until, type HttpAnswer as Answer } from './helpers/admin-http.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/**
 * Providers and credentials managed live through the admin API: listed with their source,
 * added, edited, tested and removed; roles, CSRF, audit entries, validation naming the field;
 * the secrets never shown again; and a credential added on one instance serving a request on
 * another that shares its PostgreSQL database.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
type Loose = any;

const SECRET = `sk-proj-${'FAKEfake00'.repeat(4)}`;
const OTHER_SECRET = `sk-proj-${'OTHERfake1'.repeat(4)}`;
/** An unconfigured openai (empty counts as unset): an administrator may give it a credential. */
const NO_OPENAI = { OPENAI_API_KEY: '' };

async function chat(gateway: TestGateway, key: string): Promise<Answer> {
  return send(gateway, 'POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }, { authorization: `Bearer ${key}` });
}

async function listedModels(gateway: TestGateway, key: string): Promise<string[]> {
  const answer = await send(gateway, 'GET', '/v1/models', undefined, { authorization: `Bearer ${key}` });
  return (answer.body.data as { id: string }[]).map((model) => model.id);
}

describe('admin API: providers (SQLite)', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;
  const answers: Answer[] = [];
  const track = (answer: Answer) => {
    answers.push(answer);
    return answer;
  };

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: NO_OPENAI });
    key = await gateway.createKey();
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('the kinds are every descriptor, each with its settings schema and secret fields', async () => {
    const answer = await send(gateway, 'GET', '/admin/v1/providers/kinds');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body.data.map((kind: Loose) => kind.kind), VENDOR_PROVIDERS.map((vendor) => vendor.name));
    const openai = answer.body.data.find((kind: Loose) => kind.kind === 'openai');
    assert.deepEqual(Object.keys(openai.settings_schema.properties), ['apiKey', 'baseUrl']);
    assert.deepEqual(openai.secret_fields, ['apiKey']);
    const bedrock = answer.body.data.find((kind: Loose) => kind.kind === 'bedrock');
    assert.ok(bedrock.secret_fields.includes('secretAccessKey'));
  });

  test('the environment\'s providers are listed read-only, naming their variables, their credentials as fingerprints', async () => {
    const answer = await send(gateway, 'GET', '/admin/v1/providers');
    assert.equal(answer.status, 200);
    const anthropic = answer.body.data.find((entry: Loose) => entry.name === 'anthropic');
    assert.deepEqual([anthropic.source, anthropic.origin, anthropic.read_only, anthropic.state], ['env', 'environment: ANTHROPIC_API_KEY', true, 'callable']);
    assert.equal(anthropic.credentials[0].field, 'apiKey');
    assert.ok(!answer.text.includes('sk-ant-placeholder'), 'a configured key was shown');
    assert.equal(answer.body.data.find((entry: Loose) => entry.name === 'openai'), undefined, 'an unset provider is not an entry');
    const refused = await send(gateway, 'PATCH', '/admin/v1/providers/anthropic', { settings: { apiKey: OTHER_SECRET } });
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, /comes from the environment \(ANTHROPIC_API_KEY\)/);
    const taken = await send(gateway, 'POST', '/admin/v1/providers', { name: 'anthropic', kind: 'anthropic', settings: { apiKey: OTHER_SECRET } });
    assert.equal(taken.status, 409);
  });

  test('a bad setting is refused naming the field, as at start-up', async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ name: 'openai', kind: 'openai', settings: { apiKey: SECRET, baseUrl: 'ftp://example.com' } }, 'settings.baseUrl', /^invalid setting settings\.baseUrl: /],
      [{ name: 'openai', kind: 'openai', settings: { apiKey: SECRET, baseURL: fake.server.url } }, 'settings.baseURL', /settings\.baseURL: is not a known setting \(did you mean baseUrl\?\)/],
      [{ name: 'openai', kind: 'openai', settings: { baseUrl: `${fake.server.url}/v1` } }, 'settings.apiKey', /settings\.apiKey: is required/],
      [{ name: 'openai', kind: 'opneai', settings: {} }, 'kind', /did you mean openai\?/],
      [{ name: 'openai', kind: 'mistral', settings: { apiKey: SECRET } }, 'name', /a name of its own/],
      [{ name: 'Not A Name', kind: 'openai', settings: { apiKey: SECRET } }, 'name', /lowercase/],
    ];
    for (const [body, param, message] of cases) {
      const answer = track(await send(gateway, 'POST', '/admin/v1/providers', body));
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.body.error.param, param);
      assert.match(answer.body.error.message, message);
    }
  });

  test('a credential added serves its models at once; edits and removal apply at once', async () => {
    assert.ok(!(await listedModels(gateway, key)).includes('gpt-4o-mini'));
    assert.equal((await chat(gateway, key)).body.error.code, 'provider_not_configured');

    const created = track(await send(gateway, 'POST', '/admin/v1/providers', { name: 'openai', kind: 'openai', settings: { apiKey: SECRET, baseUrl: `${fake.server.url}/v1` } }));
    assert.equal(created.status, 201, created.text);
    assert.deepEqual([created.body.source, created.body.origin, created.body.read_only, created.body.state], ['stored', 'admin API', false, 'callable']);
    assert.deepEqual(created.body.settings, { baseUrl: `${fake.server.url}/v1` });
    assert.match(created.body.credentials[0].fingerprint, /^sha256:[0-9a-f]{8} …ke00$/);
    assert.ok((await listedModels(gateway, key)).includes('gpt-4o-mini'));
    const served = await chat(gateway, key);
    assert.equal(served.status, 200, served.text);
    assert.equal(fake.chatRequests().at(-1)?.credential, SECRET);

    // Another setting changed: the secret is kept, and so is its fingerprint.
    const moved = track(await send(gateway, 'PATCH', '/admin/v1/providers/openai', { settings: { baseUrl: `${fake.server.url}/v1/` } }));
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(moved.body.credentials, created.body.credentials);
    const rotated = track(await send(gateway, 'PATCH', '/admin/v1/providers/openai', { settings: { apiKey: OTHER_SECRET } }));
    assert.notDeepEqual(rotated.body.credentials, created.body.credentials);
    assert.equal((await chat(gateway, key)).status, 200);
    assert.equal(fake.chatRequests().at(-1)?.credential, OTHER_SECRET);
    const removedKey = track(await send(gateway, 'PATCH', '/admin/v1/providers/openai', { settings: { apiKey: null } }));
    assert.equal(removedKey.body.error.param, 'settings.apiKey');

    const tested = track(await send(gateway, 'POST', '/admin/v1/providers/openai/test', {}));
    assert.equal(tested.status, 200, tested.text);
    assert.equal(tested.body.ok, true);
    assert.equal(typeof tested.body.latency_ms, 'number');
    assert.equal(tested.body.error, null);
    fake.failNext('/v1/chat/completions', 401, `Incorrect API key provided: ${OTHER_SECRET}`);
    const refused = track(await send(gateway, 'POST', '/admin/v1/providers/openai/test', {}));
    assert.equal(refused.body.ok, false);
    assert.equal(refused.body.error.code, 'provider_error');

    const removed = await send(gateway, 'DELETE', '/admin/v1/providers/openai');
    assert.equal(removed.status, 204);
    assert.ok(!(await listedModels(gateway, key)).includes('gpt-4o-mini'));
    assert.equal((await chat(gateway, key)).body.error.code, 'provider_not_configured');
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/providers/openai')).status, 404);
  });

  test('several credentials of one vendor: an instance under a name of its own', async () => {
    const batch = track(await send(gateway, 'POST', '/admin/v1/providers', { name: 'openai-batch', kind: 'openai', settings: { apiKey: OTHER_SECRET, baseUrl: `${fake.server.url}/v1` } }));
    assert.equal(batch.status, 201, batch.text);
    const tested = track(await send(gateway, 'POST', '/admin/v1/providers/openai-batch/test', { model: 'gpt-4o-mini' }));
    assert.equal(tested.body.ok, true, tested.text);
    assert.equal(fake.chatRequests().at(-1)?.credential, OTHER_SECRET);
    const list = track(await send(gateway, 'GET', '/admin/v1/providers'));
    assert.equal(list.body.data.find((entry: Loose) => entry.name === 'openai-batch').kind, 'openai');
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/providers/openai-batch')).status, 204);
  });

  test('each change is audited, before and after, without a secret', async () => {
    const audit = await send(gateway, 'GET', '/admin/v1/audit?limit=500');
    const actions = (audit.body.data as Loose[]).filter((entry) => entry.target.type === 'provider').map((entry) => `${entry.action} ${entry.target.id}`);
    assert.deepEqual(actions.sort(), ['provider.create openai', 'provider.create openai-batch', 'provider.remove openai', 'provider.remove openai-batch', 'provider.update openai', 'provider.update openai'].sort());
    const update = (audit.body.data as Loose[]).find((entry) => entry.action === 'provider.update' && entry.before.settings.baseUrl !== entry.after.settings.baseUrl);
    assert.deepEqual([update.before.settings.baseUrl, update.after.settings.baseUrl], [`${fake.server.url}/v1`, `${fake.server.url}/v1/`]);
    for (const text of [audit.text, ...answers.map((answer) => answer.text)]) {
      assert.ok(!text.includes(SECRET) && !text.includes(OTHER_SECRET), `a secret was echoed: ${text.slice(0, 300)}`);
    }
  });

  test('an admin session needs its CSRF token; a viewer may not manage providers', async () => {
    await createUsers(gateway, [['ops@example.com', 'admin'], ['viewer@example.com', 'viewer']]);
    const body = { name: 'mistral', kind: 'mistral', settings: { apiKey: SECRET } };
    const admin = await signIn(gateway, 'ops@example.com');
    const noToken = await send(gateway, 'POST', '/admin/v1/providers', body, { cookie: admin.cookie });
    assert.deepEqual([noToken.status, noToken.body.error.code], [403, 'csrf_token_invalid']);
    const viewer = await signIn(gateway, 'viewer@example.com');
    for (const [method, path] of [['GET', '/admin/v1/providers'], ['GET', '/admin/v1/providers/kinds'], ['POST', '/admin/v1/providers']]) {
      const answer = await send(gateway, method!, path!, method === 'POST' ? body : undefined, viewer.headers);
      assert.deepEqual([answer.status, answer.body.error.code], [403, 'insufficient_role'], `${method} ${path}`);
    }
    const made = await send(gateway, 'POST', '/admin/v1/providers', body, admin.headers);
    assert.equal(made.status, 201, made.text);
    const entry = (await send(gateway, 'GET', '/admin/v1/audit?action=provider.create&target=mistral')).body.data[0];
    assert.equal(entry.actor.name, 'ops@example.com');
  });
});

const POSTGRES = STORAGE_BACKENDS.find((backend) => backend.name === 'PostgreSQL')!;

describe('a credential added on one instance serves requests on another (PostgreSQL)', { skip: POSTGRES.skip }, () => {
  let storage: SharedStorage;
  let fake: OpenAIFake;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    storage = await POSTGRES.create();
    fake = await startOpenAIFake();
    const options = { env: { ...storage.env, ...NO_OPENAI }, dataDir: storage.dataDir };
    a = await startTestGateway(options);
    b = await startTestGateway(options);
  });
  after(async () => {
    await a.close();
    await b.close();
    await fake.close();
    await storage.dispose();
  });

  test('within a second of the answer, and its removal too', async () => {
    const key = await a.createKey();
    // B learns the key by looking it up; the provider it learns only through the announcement.
    assert.equal((await chat(b, key)).body.error.code, 'provider_not_configured');
    const created = await send(a, 'POST', '/admin/v1/providers', { name: 'openai', kind: 'openai', settings: { apiKey: SECRET, baseUrl: `${fake.server.url}/v1` } });
    assert.equal(created.status, 201, created.text);
    // Nothing but the announcement tells B (it has no refresh of providers): what it serves next proves it arrived.
    const served = await until(() => chat(b, key), (answer) => answer.status === 200);
    assert.equal(served.status, 200, served.text);
    assert.equal(fake.chatRequests().at(-1)?.credential, SECRET);
    assert.ok((await listedModels(b, key)).includes('gpt-4o-mini'));

    assert.equal((await send(a, 'DELETE', '/admin/v1/providers/openai')).status, 204);
    const refused = await until(() => chat(b, key), (answer) => answer.status !== 200);
    assert.equal(refused.body.error?.code, 'provider_not_configured');
  });

  test('an instance started later finds the stored credential', async () => {
    await send(a, 'POST', '/admin/v1/providers', { name: 'openai', kind: 'openai', settings: { apiKey: SECRET, baseUrl: `${fake.server.url}/v1` } });
    const c = await startTestGateway({ env: { ...storage.env, ...NO_OPENAI }, dataDir: storage.dataDir });
    try {
      const key = await c.createKey();
      assert.equal((await chat(c, key)).status, 200);
    } finally {
      await c.close();
    }
  });
});

describe('a provider sealed with a key the gateway no longer holds', () => {
  test('is left out with a warning; the gateway starts and serves', async () => {
    const storage = await STORAGE_BACKENDS[0]!.create();
    const options = { env: NO_OPENAI, dataDir: storage.dataDir };
    const first = await startTestGateway({ ...options, env: { ...NO_OPENAI, MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') } });
    assert.equal((await send(first, 'POST', '/admin/v1/providers', { name: 'openai', kind: 'openai', settings: { apiKey: SECRET } })).status, 201);
    await first.close();
    const second = await startTestGateway({ ...options, env: { ...NO_OPENAI, MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 2).toString('base64') } });
    try {
      const list = await send(second, 'GET', '/admin/v1/providers');
      assert.equal(list.status, 200);
      assert.equal(list.body.data.find((entry: Loose) => entry.name === 'openai'), undefined);
    } finally {
      await second.close();
      await storage.dispose();
    }
  });
});
