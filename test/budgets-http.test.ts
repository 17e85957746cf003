import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Budgets over HTTP (in-process counters, SQLite): the admin API, a budget at every level
 * refusing with 429 budget_exceeded naming the level, the end user of each surface kept in
 * the request log (hashed for a project that says so) and usage grouped by end user.
 */

const UPSTREAM = { OPENAI_API_KEY: 'sk-upstream-budgets-test-000000000' };
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 };

function sendCompletion(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: 'chatcmpl-budget',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 },
    }),
  );
}

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null; request_id: string };
}

describe('budgets over HTTP', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;

  before(async () => {
    fake = await startOpenAIFake();
    fake.server.on('POST /v1/chat/completions', (_request, response) => sendCompletion(response));
    gateway = await startTestGateway({
      env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1` },
      configFile: { projects: { hashed: { hashEndUsers: true } } },
    });
    for (const id of ['p-key', 'p-project', 'p-team', 'p-user', 'hashed']) assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id })).status, 201);
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  async function chat(key: string, headers: Record<string, string> = {}, body: unknown = CHAT) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, requestId: response.headers.get('x-request-id')!, body: (await response.json()) as ErrorBody };
  }

  /** Sends requests until one is refused; returns it and how many were admitted (each spends 10 tokens, the last clamped). */
  async function untilRefused(key: string, headers: Record<string, string> = {}) {
    for (let admitted = 0; admitted < 10; admitted += 1) {
      const answer = await chat(key, headers);
      if (answer.status !== 200) return { answer, admitted };
    }
    assert.fail('never refused');
  }

  test('the admin API validates budgets: an amount, a known time zone and target, one per level and target', async () => {
    assert.equal((await gateway.admin('POST', '/admin/v1/budgets', { level: 'project', target: 'p-key', period: 'day' })).body.error.code, 'invalid_body');
    const badZone = await gateway.admin('POST', '/admin/v1/budgets', { level: 'project', target: 'p-key', period: 'day', tokens: 5, reset_tz: 'Mars/Olympus' });
    assert.equal(badZone.status, 400);
    assert.equal(badZone.body.error.param, 'reset_tz');
    assert.equal((await gateway.admin('POST', '/admin/v1/budgets', { level: 'team', target: 'no-such-team', period: 'day', tokens: 5 })).status, 400);
    const created = await gateway.admin('POST', '/admin/v1/budgets', { level: 'end_user', target: 'someone', period: 'week', usd: 5, reset_tz: 'Europe/Berlin' });
    assert.equal(created.status, 201);
    assert.deepEqual([created.body.thresholds, created.body.reset_tz, created.body.tokens], [[50, 80, 100], 'Europe/Berlin', null]);
    assert.equal((await gateway.admin('POST', '/admin/v1/budgets', { level: 'end_user', target: 'someone', period: 'day', usd: 1 })).status, 409);
    const listed = await gateway.admin('GET', '/admin/v1/budgets');
    assert.equal(listed.body.data.find((budget: { id: string }) => budget.id === created.body.id).spent.usd, 0);
    assert.equal((await gateway.admin('DELETE', `/admin/v1/budgets/${created.body.id}`)).status, 204);
    assert.equal((await gateway.admin('DELETE', `/admin/v1/budgets/${created.body.id}`)).status, 404);
  });

  for (const [level, project, headers] of [
    ['key', 'p-key', {}],
    ['project', 'p-project', {}],
    ['team', 'p-team', {}],
    ['end_user', 'p-user', { 'x-end-user-id': 'student-1' }],
  ] as const) {
    test(`a ${level} budget admits while it has room, then 429 budget_exceeded names the ${level.replace('_', ' ')} and its reset`, async () => {
      const key = await gateway.createKey({ projectId: project });
      const keyId = (await gateway.admin('GET', '/admin/v1/keys')).body.data.find((view: { project_id: string }) => view.project_id === project).id as string;
      const target = level === 'key' ? keyId : level === 'project' ? project : level === 'team' ? 'default' : 'student-1';
      // A budget starts from what the request log holds for it (the default team's has earlier tests' requests).
      await gateway.gateway.context.logs.writer.flush();
      const created = await gateway.admin('POST', '/admin/v1/budgets', { level, target, tokens: 15, period: 'day', reset_tz: 'America/New_York' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const spentBefore = (await gateway.admin('GET', '/admin/v1/budgets')).body.data.find((budget: { id: string }) => budget.id === created.body.id).spent.tokens as number;
      if (spentBefore > 0) await gateway.admin('PATCH', `/admin/v1/budgets/${created.body.id}`, { tokens: spentBefore + 15 });
      try {
        const { answer, admitted } = await untilRefused(key, headers);
        // 10 tokens spent, then 5 left: admitted with its reservation clamped to them; then nothing.
        assert.equal(admitted, 2);
        assert.equal(answer.status, 429);
        assert.deepEqual(Object.keys(answer.body.error).sort(), ['code', 'message', 'param', 'request_id', 'type']);
        assert.equal(answer.body.error.type, 'rate_limit_error');
        assert.equal(answer.body.error.code, 'budget_exceeded');
        assert.equal(answer.body.error.param, null);
        assert.equal(answer.body.error.request_id, answer.requestId);
        assert.match(answer.body.error.message, new RegExp(`${level.replace('_', ' ')} "`));
        assert.match(answer.body.error.message, /resets at \d{4}-\d{2}-\d{2} 00:00 America\/New_York/);
        assert.ok(Number(answer.headers.get('retry-after')) >= 1);
        assert.equal(answer.headers.get('x-should-retry'), 'false');
        const listed = (await gateway.admin('GET', '/admin/v1/budgets')).body.data.find((budget: { id: string }) => budget.id === created.body.id);
        assert.equal(listed.spent.tokens, spentBefore + 20);
      } finally {
        await gateway.admin('DELETE', `/admin/v1/budgets/${created.body.id}`);
      }
    });
  }

  test('a budget change reaches admissions at once: raised, the refused key is admitted again', async () => {
    const key = await gateway.createKey({ projectId: 'p-project' });
    const created = await gateway.admin('POST', '/admin/v1/budgets', { level: 'project', target: 'p-project', tokens: 1, period: 'total' });
    try {
      await chat(key);
      const refused = await chat(key);
      assert.equal(refused.body.error.code, 'budget_exceeded');
      assert.match(refused.body.error.message, /does not reset/);
      await gateway.admin('PATCH', `/admin/v1/budgets/${created.body.id}`, { tokens: 1_000_000 });
      assert.equal((await chat(key)).status, 200);
    } finally {
      await gateway.admin('DELETE', `/admin/v1/budgets/${created.body.id}`);
    }
  });

  test('the end user of every surface is kept in the request log; usage groups by it', async () => {
    const key = await gateway.createKey({ projectId: 'p-user' });
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      assert.equal(response.status, 200, `${path}: ${text}`);
      return (await loggedRecord(gateway, response.headers.get('x-request-id')!)).end_user as string | null;
    };
    assert.equal(await post('/v1/chat/completions', { ...CHAT, user: 'openai-user' }), 'openai-user');
    assert.equal(await post('/v1/chat/completions', { ...CHAT, user: 'openai-user' }, { 'x-end-user-id': 'header-user' }), 'header-user');
    assert.equal(await post('/v1/messages', { model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'anthropic-user' } }), 'anthropic-user');
    assert.equal(await post('/v1/responses', { model: 'gpt-4o-mini', input: 'hi', safety_identifier: 'responses-user', user: 'other' }), 'responses-user');
    assert.equal(await post('/v1beta/models/gpt-4o-mini:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { 'x-end-user-id': 'gemini-user' }), 'gemini-user');
    assert.equal(await post('/v1beta/models/gpt-4o-mini:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }), null);
    assert.equal(await post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'hi', user: 'embedding-user' }), 'embedding-user');

    const usage = await gateway.admin('GET', '/admin/v1/usage?by=end_user&project=p-user');
    assert.equal(usage.status, 200);
    assert.equal(usage.body.by, 'end_user');
    const users = new Map(usage.body.data.map((row: { end_user: string | null; requests: number }) => [row.end_user, row.requests]));
    assert.equal(users.get('openai-user'), 1);
    assert.equal(users.get('gemini-user'), 1);
  });

  test('a project that hashes end users keeps an HMAC of the id, and an end-user budget still holds for it', async () => {
    const key = await gateway.createKey({ projectId: 'hashed' });
    const first = await chat(key, { 'x-end-user-id': 'student-9' });
    const second = await chat(key, { 'x-end-user-id': 'student-9' });
    const records = [await loggedRecord(gateway, first.requestId), await loggedRecord(gateway, second.requestId)];
    assert.match(records[0].end_user, /^h:[0-9a-f]{32}$/);
    assert.equal(records[0].end_user, records[1].end_user, 'the same person groups together');
    const created = await gateway.admin('POST', '/admin/v1/budgets', { level: 'end_user', target: 'student-9', tokens: 20, period: 'month' });
    try {
      // Seeded from the log (20 tokens spent, found by the hash): nothing left.
      const refused = await chat(key, { 'x-end-user-id': 'student-9' });
      assert.equal(refused.body.error.code, 'budget_exceeded');
      assert.equal((await chat(key, { 'x-end-user-id': 'student-10' })).status, 200);
    } finally {
      await gateway.admin('DELETE', `/admin/v1/budgets/${created.body.id}`);
    }
  });
});

describe('budget periods over HTTP with a set clock', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let now = Date.parse('2026-12-06T22:30:00Z'); // Sunday, 23:30 in Berlin

  before(async () => {
    fake = await startOpenAIFake();
    fake.server.on('POST /v1/chat/completions', (_request, response) => sendCompletion(response));
    gateway = await startTestGateway({ env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1` }, budgetClock: () => now });
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('a weekly budget refuses until Monday 00:00 in its time zone, then admits again; its reset is named in that zone', async () => {
    const key = await gateway.createKey();
    const created = await gateway.admin('POST', '/admin/v1/budgets', { level: 'project', target: 'default', tokens: 10, period: 'week', reset_tz: 'Europe/Berlin' });
    assert.equal(created.status, 201);
    const chat = async () => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(CHAT),
      });
      return { status: response.status, body: (await response.json()) as ErrorBody };
    };
    assert.equal((await chat()).status, 200);
    const refused = await chat();
    assert.equal(refused.body.error.code, 'budget_exceeded');
    assert.match(refused.body.error.message, /It resets at 2026-12-07 00:00 Europe\/Berlin\./);

    now = Date.parse('2026-12-06T23:00:00Z'); // Monday 00:00 in Berlin: a new week
    assert.equal((await chat()).status, 200);
    assert.equal((await chat()).body.error.code, 'budget_exceeded');
    const listed = (await gateway.admin('GET', '/admin/v1/budgets')).body.data[0];
    assert.deepEqual([listed.spent.period, listed.spent.tokens, listed.spent.resets_at], ['W2026-12-07', 10, '2026-12-13T23:00:00.000Z']);
  });
});
