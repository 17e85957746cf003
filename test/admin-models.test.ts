import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { createUsers, sendJson as send, signIn, until, USER_PASSWORD } from './helpers/admin-http.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/**
 * Models, prices, aliases and routing managed live through the admin API: the catalog listed
 * with each entry's source, the config file's read-only; a model disabled, added, priced and
 * aliased, in GET /v1/models at once; routing entries checked as at start-up, every problem
 * named; roles, CSRF and audit entries; and a change on one instance seen on another that
 * shares its PostgreSQL database.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
type Loose = any;

async function models(gateway: TestGateway, key: string): Promise<Loose> {
  return (await send(gateway, 'GET', '/v1/models', undefined, { authorization: `Bearer ${key}` })).body;
}

function entryOf(list: Loose, id: string): Loose {
  return (list.data as Loose[]).find((entry) => entry.id === id);
}

describe('admin API: models, prices, aliases and routing (SQLite)', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' },
      configFile: {
        catalog: { models: [{ id: 'house-model', provider: 'openai', upstreamId: 'gpt-4o-mini' }], aliases: { house: 'house-model' } },
        routing: [{ model: 'house-model', retries: 1 }],
      },
    });
    key = await gateway.createKey();
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('the catalog is listed with each model\'s source; the config file\'s are read-only', async () => {
    const list = await send(gateway, 'GET', '/admin/v1/models/settings');
    assert.equal(list.status, 200, list.text);
    const shipped = entryOf(list.body, 'gpt-4o-mini');
    assert.deepEqual([shipped.source, shipped.origin, shipped.read_only, shipped.enabled, shipped.listed], ['shipped', 'shipped catalog', false, true, true]);
    const house = entryOf(list.body, 'house-model');
    assert.deepEqual([house.source, house.origin, house.read_only, house.upstream_id], ['config', 'config file: catalog.models[0]', true, 'gpt-4o-mini']);
    const refused = await send(gateway, 'PUT', '/admin/v1/models/settings/house-model', { disabled: true });
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, /config file: catalog\.models\[0\].*read-only/);
    const aliases = await send(gateway, 'GET', '/admin/v1/models/aliases');
    const houseAlias = (aliases.body.data as Loose[]).find((alias) => alias.alias === 'house');
    assert.deepEqual([houseAlias.target, houseAlias.kind, houseAlias.source, houseAlias.read_only], ['house-model', 'legacy', 'config', true]);
    const routing = await send(gateway, 'GET', '/admin/v1/routing');
    assert.deepEqual(routing.body.data.map((view: Loose) => [view.model, view.source, view.read_only]), [['house-model', 'config', true]]);
    assert.equal((await send(gateway, 'PUT', '/admin/v1/routing/house-model', { retries: 2 })).status, 409);
  });

  test('a shipped model disabled leaves GET /v1/models at once and is refused; reset, it is back', async () => {
    const disabled = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4.1-mini', { disabled: true, note: 'retired for the course' });
    assert.equal(disabled.status, 200, disabled.text);
    assert.deepEqual([disabled.body.enabled, disabled.body.source, disabled.body.note, disabled.body.updated_by], [false, 'stored', 'retired for the course', 'admin token']);
    const listed = await models(gateway, key);
    assert.equal(entryOf(listed, 'gpt-4.1-mini'), undefined);
    const call = await send(gateway, 'POST', '/v1/chat/completions', { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Bearer ${key}` });
    assert.deepEqual([call.status, call.body.error.code], [400, 'model_not_found'], call.text);
    assert.match(call.body.error.message, /disabled on this gateway/);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/models/settings/gpt-4.1-mini')).status, 204);
    assert.ok(entryOf(await models(gateway, key), 'gpt-4.1-mini'));
    // The target of a service alias asks for a new target first, as at start-up.
    const aliased = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4.1', { disabled: true });
    assert.deepEqual([aliased.status, aliased.body.error.param], [400, 'catalog.serviceAliases.service-2']);
    // The default model cannot be disabled from under the requests that name none.
    const defaulted = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4o-mini', { disabled: true });
    assert.equal(defaulted.status, 400);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/models/settings/gpt-4.1-mini')).status, 404);
  });

  test('a price override, with its status and note, is what GET /v1/models shows', async () => {
    const priced = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4o', {
      pricing: { input_per_million: 1.5, output_per_million: 6, status: 'docs_inferred', note: 'negotiated rate' },
      note: 'contract of 2026',
    });
    assert.equal(priced.status, 200, priced.text);
    const entry = entryOf(await models(gateway, key), 'gpt-4o');
    assert.deepEqual([entry.pricing.input_per_million, entry.pricing.output_per_million, entry.pricing.status, entry.pricing.note], [1.5, 6, 'docs_inferred', 'negotiated rate']);
    // The rest of the shipped entry stays as it was.
    assert.equal(entry.mode, 'chat');
    assert.ok(entry.context_window > 0);
  });

  test('a model added with its upstream id, mode, modalities and limits is listed and served', async () => {
    const added = await send(gateway, 'PUT', '/admin/v1/models/settings/course-chat', {
      provider: 'openai',
      upstreamId: 'gpt-4o-mini',
      mode: 'chat',
      input_modalities: ['text', 'image'],
      context_window: 64_000,
      max_output_tokens: 4_000,
      tools: true,
    });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual([added.body.source, added.body.provider, added.body.upstream_id], ['stored', 'openai', 'gpt-4o-mini']);
    const entry = entryOf(await models(gateway, key), 'course-chat');
    assert.deepEqual([entry.context_window, entry.max_output_tokens, entry.capabilities.images, entry.owned_by], [64_000, 4_000, true, 'openai']);
    const call = await send(gateway, 'POST', '/v1/chat/completions', { model: 'course-chat', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Bearer ${key}` });
    assert.equal(call.status, 200, call.text);
    assert.equal((fake.server.requests.at(-1)?.json as { model?: string } | undefined)?.model, 'gpt-4o-mini');
  });

  test('a bad model setting is refused naming each field, and nothing changes', async () => {
    const cases: [string, unknown, string, RegExp][] = [
      ['course-chat', { context_window: 'big' }, 'context_window', /invalid setting context_window: /],
      ['course-chat', { provider: 'nope' }, 'provider', /invalid setting provider: "nope" is not a provider of this gateway/],
      ['course-chat', { pricing: { input_per_million: -1 } }, 'pricing.input_per_million', /pricing\.input_per_million/],
      ['course-chat', { contextWindow: 5 }, 'contextWindow', /is not a known setting \(did you mean context_window\?\)/],
      ['Bad Id!', {}, 'id', /letters, digits/],
    ];
    for (const [id, body, param, message] of cases) {
      const answer = await send(gateway, 'PUT', `/admin/v1/models/settings/${encodeURIComponent(id)}`, body);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(answer.body.error.param, param, answer.text);
      assert.match(answer.body.error.message, message);
    }
    const both = await send(gateway, 'PUT', '/admin/v1/models/settings/course-chat', { context_window: 0, mode: 'video' });
    assert.match(both.body.error.message, /context_window.*; invalid setting mode|mode.*; invalid setting context_window/);
    assert.equal(entryOf(await models(gateway, key), 'course-chat').context_window, 64_000);
  });

  test('aliases: a legacy alias in the aliases map, a service alias listed as a model of its own', async () => {
    const legacy = await send(gateway, 'PUT', '/admin/v1/models/aliases/quick', { target: 'gpt-4o-mini', note: 'for the course' });
    assert.equal(legacy.status, 200, legacy.text);
    assert.equal((await models(gateway, key)).aliases.quick, 'gpt-4o-mini');
    const service = await send(gateway, 'PUT', '/admin/v1/models/aliases/course-default', { target: 'course-chat', kind: 'service' });
    assert.equal(service.status, 200, service.text);
    assert.equal(entryOf(await models(gateway, key), 'course-default').owned_by, 'modelgate');
    const bad = await send(gateway, 'PUT', '/admin/v1/models/aliases/quick', { target: 'no-such-model' });
    assert.deepEqual([bad.status, bad.body.error.param], [400, 'target']);
    const taken = await send(gateway, 'PUT', '/admin/v1/models/aliases/gpt-4o', { target: 'gpt-4o-mini' });
    assert.deepEqual([taken.status, taken.body.error.param], [400, 'alias']);
    assert.equal((await send(gateway, 'PUT', '/admin/v1/models/aliases/house', { target: 'gpt-4o' })).status, 409);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/models/aliases/quick')).status, 204);
    assert.equal((await models(gateway, key)).aliases.quick, undefined);
  });

  test('a routing entry is checked as at start-up, every problem named by its field', async () => {
    const schema = await send(gateway, 'PUT', '/admin/v1/routing/gpt-4o', { retries: 99, cooldown: { failures: 0 } });
    assert.equal(schema.status, 400, schema.text);
    assert.match(schema.body.error.message, /invalid setting retries: .*; invalid setting cooldown\.failures: /);
    const compiled = await send(gateway, 'PUT', '/admin/v1/routing/gpt-4o', { deployments: [{ provider: 'nope' }], fallbacks: ['no-such-model'] });
    assert.equal(compiled.status, 400, compiled.text);
    assert.equal(compiled.body.error.param, 'deployments[0].provider');
    assert.match(compiled.body.error.message, /deployments\[0\]\.provider: "nope" is not a provider/);
    assert.match(compiled.body.error.message, /fallbacks\[0\]: "no-such-model" is not a model/);
    const set = await send(gateway, 'PUT', '/admin/v1/routing/gpt-4o', { deployments: [{ provider: 'openai', weight: 2 }], retries: 2, fallbacks: ['gpt-4.1-mini'], cooldown: { durationMs: 5000 }, timeouts: { firstByteMs: 20_000 }, note: 'spread the load' });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual([set.body.source, set.body.in_force, set.body.entry.retries, set.body.entry.cooldown.failures, set.body.note], ['stored', true, 2, 3, 'spread the load']);
    const call = await send(gateway, 'POST', '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Bearer ${key}` });
    assert.equal(call.status, 200, call.text);
    const routing = await send(gateway, 'GET', '/admin/v1/routing');
    assert.deepEqual(routing.body.data.map((view: Loose) => `${view.model} ${view.source}`), ['house-model config', 'gpt-4o stored']);
    // The model a routing entry falls back to cannot be disabled from under it.
    const disabling = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4.1-mini', { disabled: true });
    assert.equal(disabling.status, 400, disabling.text);
    assert.match(disabling.body.error.message, /routing\[1\]\.fallbacks\[0\]/);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/routing/gpt-4o')).status, 204);
  });

  test('each change is audited with before and after', async () => {
    const audit = await send(gateway, 'GET', '/admin/v1/audit?limit=500');
    const actions = new Set((audit.body.data as Loose[]).map((entry) => `${entry.action} ${entry.target.id}`));
    for (const action of ['model.set gpt-4.1-mini', 'model.reset gpt-4.1-mini', 'model.set gpt-4o', 'model.set course-chat', 'alias.set quick', 'alias.remove quick', 'alias.set course-default', 'routing.set gpt-4o', 'routing.remove gpt-4o']) {
      assert.ok(actions.has(action), `no audit entry ${action}`);
    }
    const priced = (audit.body.data as Loose[]).find((entry) => entry.action === 'model.set' && entry.target.id === 'gpt-4o');
    assert.equal(priced.before.source, 'shipped');
    assert.equal(priced.after.entry.pricing.input_per_million, 1.5);
  });

  test('an admin session needs its CSRF token; a viewer and a team admin may not manage the catalog', async () => {
    await createUsers(gateway, [['ops@example.com', 'admin'], ['viewer@example.com', 'viewer']]);
    await gateway.gateway.context.accounts.createUser('lead@example.com', USER_PASSWORD, 'team_admin', ['default']);
    const admin = await signIn(gateway, 'ops@example.com');
    const noToken = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4o', { disabled: true }, { cookie: admin.cookie });
    assert.deepEqual([noToken.status, noToken.body.error.code], [403, 'csrf_token_invalid']);
    for (const email of ['viewer@example.com', 'lead@example.com']) {
      const other = await signIn(gateway, email);
      for (const [method, path] of [['GET', '/admin/v1/models/settings'], ['PUT', '/admin/v1/models/settings/gpt-4o'], ['GET', '/admin/v1/routing'], ['PUT', '/admin/v1/routing/gpt-4o'], ['PUT', '/admin/v1/models/aliases/x']]) {
        const answer = await send(gateway, method!, path!, method === 'PUT' ? { target: 'gpt-4o' } : undefined, other.headers);
        assert.deepEqual([answer.status, answer.body.error.code], [403, 'insufficient_role'], `${email} ${method} ${path}`);
      }
    }
    const made = await send(gateway, 'PUT', '/admin/v1/models/settings/gpt-4o', { pricing: { input_per_million: 2, output_per_million: 8 } }, admin.headers);
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.updated_by, 'ops@example.com');
    const entry = (await send(gateway, 'GET', '/admin/v1/audit?action=model.set&target=gpt-4o')).body.data[0];
    assert.equal(entry.actor.name, 'ops@example.com');
  });
});

const POSTGRES = STORAGE_BACKENDS.find((backend) => backend.name === 'PostgreSQL')!;

describe('a model or price changed on one instance is listed so on another (PostgreSQL)', { skip: POSTGRES.skip }, () => {
  let storage: SharedStorage;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    storage = await POSTGRES.create();
    const options = { env: storage.env, dataDir: storage.dataDir };
    a = await startTestGateway(options);
    b = await startTestGateway(options);
  });
  after(async () => {
    await a.close();
    await b.close();
    await storage.dispose();
  });

  test('a disabled model, a new price and a routing entry reach the other instance; so does the reset', async () => {
    const key = await a.createKey();
    assert.ok(entryOf(await models(b, key), 'gpt-4.1-mini'));
    assert.equal((await send(a, 'PUT', '/admin/v1/models/settings/gpt-4.1-mini', { disabled: true })).status, 200);
    // Nothing but the announcement tells B: what it lists next proves it arrived.
    const gone = await until(() => models(b, key), (list) => entryOf(list, 'gpt-4.1-mini') === undefined);
    assert.equal(entryOf(gone, 'gpt-4.1-mini'), undefined);

    assert.equal((await send(a, 'PUT', '/admin/v1/models/settings/gpt-4o', { pricing: { input_per_million: 0.5, output_per_million: 1 } })).status, 200);
    const priced = await until(() => models(b, key), (list) => entryOf(list, 'gpt-4o')?.pricing?.input_per_million === 0.5);
    assert.equal(entryOf(priced, 'gpt-4o').pricing.input_per_million, 0.5);

    assert.equal((await send(a, 'PUT', '/admin/v1/routing/gpt-4o', { retries: 3 })).status, 200);
    const routed = await until(() => send(b, 'GET', '/admin/v1/routing'), (answer) => answer.body.data.some((view: Loose) => view.model === 'gpt-4o'));
    assert.equal(routed.body.data.find((view: Loose) => view.model === 'gpt-4o').entry.retries, 3);

    assert.equal((await send(a, 'DELETE', '/admin/v1/models/settings/gpt-4.1-mini')).status, 204);
    const back = await until(() => models(b, key), (list) => entryOf(list, 'gpt-4.1-mini') !== undefined);
    assert.ok(entryOf(back, 'gpt-4.1-mini'));
  });

  test('an instance started later finds the stored settings', async () => {
    assert.equal((await send(a, 'PUT', '/admin/v1/models/settings/gpt-4.1-mini', { disabled: true })).status, 200);
    const c = await startTestGateway({ env: storage.env, dataDir: storage.dataDir });
    try {
      const key = await c.createKey();
      const list = await models(c, key);
      assert.equal(entryOf(list, 'gpt-4.1-mini'), undefined);
      assert.equal(entryOf(list, 'gpt-4o').pricing.input_per_million, 0.5);
    } finally {
      await c.close();
    }
  });
});
