import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { createUsers, sendJson as send, signIn, until, type HttpAnswer as Answer } from './helpers/admin-http.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';
import { Guardrails } from '../src/guardrails/index.js';

/**
 * Guardrails defined through the admin API: created, changed and deleted over HTTP, applied to
 * the next call; validation naming the field (the config file's parser); config-file entries
 * read-only; roles, CSRF and audit entries; a guardrail created on one instance blocking a chat
 * on another that shares its PostgreSQL database; and the moderation check against the fake
 * upstream's moderation endpoint: flagged, not flagged, thresholds, an upstream error (closed).
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
type Loose = any;

const UPSTREAM_KEY = 'sk-upstream-guardrails-admin-0000000';

function chat(gateway: TestGateway, key: string, content: string): Promise<Answer> {
  return send(gateway, 'POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }, { authorization: `Bearer ${key}` });
}

const CODENAME = { name: 'codename', check: 'keywords', action: 'block', apply: { projects: ['p1'] }, options: { words: ['nightingale'] } };

describe('admin API: guardrails (SQLite)', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  const keys: Record<string, string> = {};

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: `${fake.server.url}/v1` },
      configFile: { guardrails: [{ name: 'cfg-secrets', check: 'secrets', apply: { projects: ['cfg'] } }] },
    });
    for (const project of ['p1', 'p2', 'mod']) keys[project] = await gateway.createKey({ projectId: project });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('a guardrail created through the API blocks the next call it attaches to; a change and a delete apply as quickly', async () => {
    assert.equal((await chat(gateway, keys.p1!, 'about nightingale')).status, 200);
    const created = await send(gateway, 'POST', '/admin/v1/guardrails', CODENAME);
    assert.equal(created.status, 201, created.text);
    assert.deepEqual([created.body.source, created.body.read_only, created.body.stage, created.body.on_error], ['stored', false, ['input'], 'closed']);

    const blocked = await chat(gateway, keys.p1!, 'about Nightingale');
    assert.deepEqual([blocked.status, blocked.body.error.code], [400, 'guardrail_blocked']);
    assert.match(blocked.body.error.message, /"codename"/);
    assert.equal((await chat(gateway, keys.p2!, 'about nightingale')).status, 200, 'another project is not attached');

    const changed = await send(gateway, 'PATCH', '/admin/v1/guardrails/codename', { options: { words: ['kestrel'] } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await chat(gateway, keys.p1!, 'about nightingale')).status, 200);
    assert.equal((await chat(gateway, keys.p1!, 'about kestrel')).status, 400);

    const listed = await send(gateway, 'GET', '/admin/v1/guardrails');
    assert.deepEqual(
      listed.body.data.map((entry: Loose) => [entry.name, entry.source, entry.read_only]),
      [
        ['cfg-secrets', 'config', true],
        ['codename', 'stored', false],
      ],
    );
    const dry = await send(gateway, 'POST', '/admin/v1/guardrails/codename/test', { text: 'a kestrel' });
    assert.equal(dry.body.outcome, 'blocked');

    assert.equal((await send(gateway, 'DELETE', '/admin/v1/guardrails/codename')).status, 204);
    assert.equal((await chat(gateway, keys.p1!, 'about kestrel')).status, 200);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/guardrails/codename')).status, 404);
  });

  test('each change is audited with what it was before and after', async () => {
    const audit = await send(gateway, 'GET', '/admin/v1/audit?limit=500');
    const entries = (audit.body.data as Loose[]).filter((entry) => entry.target.type === 'guardrail' && entry.target.id === 'codename');
    assert.deepEqual(entries.map((entry) => entry.action).sort(), ['guardrail.create', 'guardrail.delete', 'guardrail.update']);
    const update = entries.find((entry) => entry.action === 'guardrail.update');
    assert.deepEqual([update.before.options.words, update.after.options.words], [['nightingale'], ['kestrel']]);
    const deleted = entries.find((entry) => entry.action === 'guardrail.delete');
    assert.deepEqual(deleted.before.options.words, ['kestrel']);
  });

  test('a problem names the field, as the config file would', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...CODENAME, name: 'bad-regex', check: 'regex', options: { patterns: ['ok', '(unclosed'] } }, 'options.patterns[1]'],
      [{ ...CODENAME, name: 'no-words', options: { words: [] } }, 'options.words'],
      [{ ...CODENAME, name: 'nowhere', apply: {} }, 'apply'],
      [{ ...CODENAME, name: 'Upper Case' }, 'name'],
      [{ ...CODENAME, name: 'mask-model', check: 'model', action: 'mask', options: { model: 'gpt-4o-mini' } }, 'action'],
      [{ ...CODENAME, name: 'no-model', check: 'model', options: { model: 'no-such-model' } }, 'options.model'],
      [{ ...CODENAME, name: 'no-provider', check: 'moderation', options: { provider: 'no-such-provider' } }, 'options.provider'],
      [{ ...CODENAME, name: 'bad-threshold', check: 'moderation', options: { provider: 'openai', thresholds: { violence: 2 } } }, 'options.thresholds.violence'],
      [{ ...CODENAME, name: 'hook', check: 'webhook', options: { url: 'https://hooks.example.com/check', secretEnv: 'GUARDRAIL_HOOK_KEY_UNSET' } }, 'options.secretEnv'],
    ];
    for (const [body, field] of cases) {
      const answer = await send(gateway, 'POST', '/admin/v1/guardrails', body);
      assert.deepEqual([answer.status, answer.body.error.code, answer.body.error.param], [400, 'invalid_body', field], answer.text);
      assert.match(answer.body.error.message, new RegExp(`invalid setting ${field.replace(/[[\].]/g, '\\$&')}`));
    }
    const listed = await send(gateway, 'GET', '/admin/v1/guardrails');
    assert.equal(listed.body.data.length, 1, 'nothing invalid was stored');
  });

  test("a config-file guardrail is read-only and keeps its name", async () => {
    const taken = await send(gateway, 'POST', '/admin/v1/guardrails', { ...CODENAME, name: 'cfg-secrets' });
    assert.deepEqual([taken.status, taken.body.error.code], [409, 'conflict']);
    assert.equal((await send(gateway, 'PATCH', '/admin/v1/guardrails/cfg-secrets', { action: 'log' })).status, 409);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/guardrails/cfg-secrets')).status, 409);
  });

  test('an admin session needs its CSRF token; a viewer may not define guardrails', async () => {
    await createUsers(gateway, [['guard-ops@example.com', 'admin'], ['guard-viewer@example.com', 'viewer']]);
    const body = { ...CODENAME, name: 'by-session' };
    const admin = await signIn(gateway, 'guard-ops@example.com');
    const noToken = await send(gateway, 'POST', '/admin/v1/guardrails', body, { cookie: admin.cookie });
    assert.deepEqual([noToken.status, noToken.body.error.code], [403, 'csrf_token_invalid']);
    const viewer = await signIn(gateway, 'guard-viewer@example.com');
    for (const [method, path] of [['POST', '/admin/v1/guardrails'], ['PATCH', '/admin/v1/guardrails/by-session'], ['DELETE', '/admin/v1/guardrails/by-session']]) {
      const answer = await send(gateway, method!, path!, method === 'DELETE' ? undefined : body, viewer.headers);
      assert.deepEqual([answer.status, answer.body.error.code], [403, 'insufficient_role'], `${method} ${path}`);
    }
    const made = await send(gateway, 'POST', '/admin/v1/guardrails', body, admin.headers);
    assert.equal(made.status, 201, made.text);
    const entry = (await send(gateway, 'GET', '/admin/v1/audit?action=guardrail.create&target=by-session')).body.data[0];
    assert.match(JSON.stringify(entry.actor), /guard-ops@example\.com/);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/guardrails/by-session', undefined, admin.headers)).status, 204);
  });

  test("moderation: the provider's endpoint flags, passes, applies thresholds, and an upstream error blocks (closed)", async () => {
    const made = await send(gateway, 'POST', '/admin/v1/guardrails', { name: 'moderated', check: 'moderation', action: 'block', apply: { projects: ['mod'] }, options: { provider: 'openai' } });
    assert.equal(made.status, 201, made.text);
    const flagged = await chat(gateway, keys.mod!, 'I want to kill them.');
    assert.deepEqual([flagged.status, flagged.body.error.code], [400, 'guardrail_blocked']);
    const asked = fake.server.requests.filter((request) => request.path === '/v1/moderations').at(-1);
    assert.deepEqual(asked?.json, { model: 'omni-moderation-latest', input: 'I want to kill them.' });
    assert.equal(asked?.headers.authorization, `Bearer ${UPSTREAM_KEY}`);

    assert.equal((await chat(gateway, keys.mod!, 'What a lovely day.')).status, 200);

    fake.failNext('/v1/moderations', 500, 'The server had an error while processing your request.');
    const failed = await chat(gateway, keys.mod!, 'What a lovely day.');
    assert.deepEqual([failed.status, failed.body.error.code], [400, 'guardrail_blocked']);
    assert.match(failed.body.error.message, /could not check this request and fails closed/);
    // A 200 that is no verdict (a score that is not a number) is no verdict either.
    fake.answerNext('/v1/moderations', '{"id":"modr-1","model":"omni-moderation-latest","results":[{"flagged":false,"categories":{"violence":false},"category_scores":{"violence":"low"}}]}');
    assert.equal((await chat(gateway, keys.mod!, 'What a lovely day.')).status, 400);

    // Thresholds: every category of the flagged text under its bar passes; a low bar flags a clean text.
    const lenient = Object.fromEntries(['harassment', 'harassment/threatening', 'violence', 'violence/graphic'].map((category) => [category, 1]));
    assert.equal((await send(gateway, 'PATCH', '/admin/v1/guardrails/moderated', { options: { provider: 'openai', thresholds: lenient } })).status, 200);
    assert.equal((await chat(gateway, keys.mod!, 'I want to kill them.')).status, 200);
    assert.equal((await send(gateway, 'PATCH', '/admin/v1/guardrails/moderated', { options: { provider: 'openai', thresholds: { harassment: 0.0005 } } })).status, 200);
    assert.equal((await chat(gateway, keys.mod!, 'What a lovely day.')).status, 400);
    assert.equal((await send(gateway, 'DELETE', '/admin/v1/guardrails/moderated')).status, 204);
  });
});

const POSTGRES = STORAGE_BACKENDS.find((backend) => backend.name === 'PostgreSQL')!;

describe('a guardrail created on one instance blocks chats on another (PostgreSQL)', { skip: POSTGRES.skip }, () => {
  let storage: SharedStorage;
  let fake: OpenAIFake;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    storage = await POSTGRES.create();
    fake = await startOpenAIFake();
    const options = { env: { ...storage.env, OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: `${fake.server.url}/v1` }, dataDir: storage.dataDir };
    a = await startTestGateway(options);
    b = await startTestGateway(options);
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await fake?.close();
    await storage?.dispose();
  });

  test('within a second of the answer, and its deletion too', async () => {
    const key = await a.createKey({ projectId: 'p1' });
    assert.equal((await chat(b, key, 'about nightingale')).status, 200);
    const created = await send(a, 'POST', '/admin/v1/guardrails', CODENAME);
    assert.equal(created.status, 201, created.text);
    // Only the announcement tells B: what it answers next proves it arrived.
    const blocked = await until(() => chat(b, key, 'about nightingale'), (answer) => answer.status !== 200);
    assert.deepEqual([blocked.status, blocked.body.error?.code], [400, 'guardrail_blocked']);
    assert.equal((await send(b, 'GET', '/admin/v1/guardrails')).body.data.at(-1).name, 'codename');

    assert.equal((await send(a, 'DELETE', '/admin/v1/guardrails/codename')).status, 204);
    const passed = await until(() => chat(b, key, 'about nightingale'), (answer) => answer.status === 200);
    assert.equal(passed.status, 200);
  });
});

describe('the moderation check on its own', () => {
  test('a config-file moderation guardrail naming a provider the gateway lacks stops start-up, naming the field', async () => {
    const guardrail = { name: 'moderated', check: 'moderation', apply: { all: true }, options: { provider: 'no-such-provider' } };
    await assert.rejects(startTestGateway({ configFile: { guardrails: [guardrail] } }), /invalid setting guardrails\[0\]\.options\.provider: "no-such-provider" is not a provider/);
  });

  test('a moderation endpoint that does not answer within timeoutMs fails the check: closed blocks, open lets through', async () => {
    const hanging = { moderate: () => new Promise<never>(() => undefined) };
    const entry = (onError: 'closed' | 'open') => ({
      name: `slow-${onError}`,
      check: 'moderation' as const,
      stage: ['input' as const],
      action: 'block' as const,
      onError,
      apply: { all: true, keys: [], projects: [], models: [] },
      window: 256,
      options: { provider: 'moderator', timeoutMs: 100 },
    });
    const guardrails = new Guardrails([entry('closed'), entry('open')], { env: {}, moderation: () => hanging });
    // The timeout's timer does not hold the process open (a serving gateway's listener does).
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      const closed = await guardrails.dryRun('slow-closed', 'input', 'hello');
      assert.deepEqual([closed?.verdict.outcome, closed?.verdict.failed, closed?.blocked], ['blocked', true, true]);
      const open = await guardrails.dryRun('slow-open', 'input', 'hello');
      assert.deepEqual([open?.verdict.outcome, open?.blocked], ['error', false]);
    } finally {
      clearInterval(keepAlive);
    }
  });
});
