import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleGraph } from './helpers/agents.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * A `team_admin` dashboard account sees and manages its teams' projects only: another team's
 * key, log record, usage and agent are answered as unknown (404), in lists they are absent,
 * and routes outside a team admin's reach (accounts, audit log) answer 403 insufficient_role.
 * Enforced by the admin API, whatever a page shows.
 */

const PASSWORD = 'team admin password 0123';

let gateway: TestGateway;
let session: { cookie: string; csrf: string };
const keys = { red: '', blue: '' };
const requests = { red: '', blue: '' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test asserts what it reads
async function asTeamAdmin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { cookie: session.cookie, 'x-csrf-token': session.csrf };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await gateway.fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await response.text();
  return { status: response.status, body: text.length > 0 ? JSON.parse(text) : null };
}

/** A keyed request the gateway refuses before any provider (unknown model), logged under the key's project. */
async function loggedRequest(secret: string): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await response.text();
  return response.headers.get('x-request-id')!;
}

before(async () => {
  gateway = await startTestGateway();
  const { db } = gateway.gateway.storage;
  await db.insertInto('teams').values([{ id: 'red', name: 'Red', created_at: Date.now() }, { id: 'blue', name: 'Blue', created_at: Date.now() }]).execute();
  await gateway.gateway.context.keys.projects.create('p-red', 'Red project', 'red');
  await gateway.gateway.context.keys.projects.create('p-blue', 'Blue project', 'blue');
  for (const team of ['red', 'blue'] as const) {
    const created = await gateway.admin('POST', '/admin/v1/keys', { name: `${team} key`, project: `p-${team}`, scopes: ['model:request'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    keys[team] = created.body.id;
    requests[team] = await loggedRequest(created.body.secret);
    const agent = await gateway.admin('PUT', `/admin/v1/agents/${team}-agent`, { graph: simpleGraph({}, 'gpt-4o'), project: `p-${team}` });
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
  }
  await gateway.gateway.context.logs.writer.flush();
  await gateway.gateway.context.accounts.createUser('red-lead@example.com', PASSWORD, 'team_admin', ['red']);
  const signIn = await gateway.fetch('/admin/v1/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'red-lead@example.com', password: PASSWORD }),
  });
  const view = (await signIn.json()) as { csrf_token: string; user: { role: string; team_ids: string[] } };
  assert.equal(signIn.status, 200);
  assert.deepEqual([view.user.role, view.user.team_ids], ['team_admin', ['red']]);
  session = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: view.csrf_token };
});

after(async () => {
  await gateway.close();
});

describe('a team admin', () => {
  test("lists its teams' projects and keys only, paged or not", async () => {
    const projects = await asTeamAdmin('GET', '/admin/v1/projects');
    assert.deepEqual(projects.body.data.map((project: { id: string }) => project.id), ['p-red']);
    for (const path of ['/admin/v1/keys', '/admin/v1/keys?limit=50', '/admin/v1/keys?project=p-blue&limit=50', '/admin/v1/keys?project=p-blue']) {
      const list = await asTeamAdmin('GET', path);
      assert.equal(list.status, 200, path);
      assert.deepEqual(list.body.data.map((key: { id: string }) => key.id), path.includes('p-blue') ? [] : [keys.red], path);
    }
    const spend = await asTeamAdmin('GET', `/admin/v1/keys/spend?ids=${keys.red},${keys.blue}`);
    assert.deepEqual(spend.body.data.map((row: { key_id: string }) => row.key_id), [keys.red]);
  });

  test("cannot see or change another team's key (404, as an unknown key)", async () => {
    assert.equal((await asTeamAdmin('GET', `/admin/v1/keys/${keys.red}`)).status, 200);
    for (const [method, path, body] of [
      ['GET', `/admin/v1/keys/${keys.blue}`, undefined],
      ['PATCH', `/admin/v1/keys/${keys.blue}`, { name: 'taken over' }],
      ['POST', `/admin/v1/keys/${keys.blue}/revoke`, undefined],
      ['POST', `/admin/v1/keys/${keys.blue}/rotate`, {}],
      ['POST', '/admin/v1/keys', { name: 'planted', project: 'p-blue', scopes: ['model:request'] }],
      ['POST', '/admin/v1/projects/p-blue/keys/pause', undefined],
    ] as const) {
      const answer = await asTeamAdmin(method, path, body);
      assert.equal(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'not_found');
    }
    const blue = await gateway.admin('GET', `/admin/v1/keys/${keys.blue}`);
    assert.deepEqual([blue.body.name, blue.body.status], ['blue key', 'active']);
  });

  test('manages its own keys', async () => {
    const created = await asTeamAdmin('POST', '/admin/v1/keys', { name: 'red second', project: 'p-red', scopes: ['model:request'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const paused = await asTeamAdmin('POST', `/admin/v1/keys/${created.body.id}/pause`);
    assert.equal(paused.body.status, 'paused');
  });

  test("reads its teams' log records and usage only", async () => {
    const list = await asTeamAdmin('GET', '/admin/v1/logs');
    const ids = list.body.data.map((record: { request_id: string }) => record.request_id);
    assert.ok(ids.includes(requests.red), JSON.stringify(list.body));
    assert.ok(!ids.includes(requests.blue));
    assert.equal((await asTeamAdmin('GET', `/admin/v1/logs/${requests.red}`)).status, 200);
    assert.equal((await asTeamAdmin('GET', `/admin/v1/logs/${requests.blue}`)).status, 404);
    const filtered = await asTeamAdmin('GET', `/admin/v1/logs?key=${keys.blue}`);
    assert.deepEqual(filtered.body.data, []);
    const usage = await asTeamAdmin('GET', '/admin/v1/usage?by=key');
    assert.deepEqual(usage.body.data.map((row: { key_id: string }) => row.key_id), [keys.red]);
    const everything = await gateway.admin('GET', '/admin/v1/usage?by=key');
    assert.equal(everything.body.data.length, 2);
  });

  test("cannot see, change or publish another team's agent", async () => {
    const list = await asTeamAdmin('GET', '/admin/v1/agents');
    assert.deepEqual(list.body.data.map((agent: { slug: string }) => agent.slug), ['red-agent']);
    for (const [method, path, body] of [
      ['GET', '/admin/v1/agents/blue-agent', undefined],
      ['PUT', '/admin/v1/agents/blue-agent', { graph: simpleGraph({}, 'gpt-4o') }],
      ['POST', '/admin/v1/agents/blue-agent/publish', {}],
      ['GET', '/admin/v1/agents/blue-agent/grants', undefined],
    ] as const) {
      const answer = await asTeamAdmin(method, path, body);
      assert.equal(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    }
    const planted = await asTeamAdmin('PUT', '/admin/v1/agents/planted', { graph: simpleGraph({}, 'gpt-4o'), project: 'p-blue' });
    assert.equal(planted.status, 400);
    assert.equal((await asTeamAdmin('POST', '/admin/v1/agents/red-agent/publish', {})).status, 200);
  });

  test("sees its teams', projects' and keys' budgets and their alerts; sets its projects' and keys' only", async () => {
    const made: Record<string, string> = {};
    for (const [name, level, target] of [
      ['team red', 'team', 'red'],
      ['team blue', 'team', 'blue'],
      ['project blue', 'project', 'p-blue'],
      ['key red', 'key', keys.red],
      ['key blue', 'key', keys.blue],
      ['end user', 'end_user', 'student-7'],
    ] as const) {
      const created = await gateway.admin('POST', '/admin/v1/budgets', { level, target, usd: 10, period: 'month' });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      made[name] = created.body.id;
    }
    const { db } = gateway.gateway.storage;
    const alertOf = (id: string, budget: string) => ({
      id, budget_id: budget, period_id: '2026-12', threshold: 50, level: 'team', target: 'x', spent_micro_usd: 5_000_000, spent_tokens: 0,
      state: 'no_webhook', attempts: 0, next_attempt_at: null, last_error: null, created_at: Date.now(), delivered_at: null,
    });
    await db.insertInto('budget_alerts').values([alertOf('alert-red', made['team red']!), alertOf('alert-blue', made['team blue']!)]).execute();

    const ids = async () => ((await asTeamAdmin('GET', '/admin/v1/budgets')).body.data as { id: string }[]).map((budget) => budget.id).sort();
    assert.deepEqual(await ids(), [made['team red'], made['key red']].sort());
    const alerts = await asTeamAdmin('GET', '/admin/v1/budgets/alerts');
    assert.deepEqual(alerts.body.data.map((alert: { id: string }) => alert.id), ['alert-red']);
    assert.equal((await gateway.admin('GET', '/admin/v1/budgets/alerts')).body.data.length, 2);

    // Its own project's and key's budgets: set, changed, removed.
    const own = await asTeamAdmin('POST', '/admin/v1/budgets', { level: 'project', target: 'p-red', tokens: 1000, period: 'day' });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    assert.deepEqual(await ids(), [made['team red'], made['key red'], own.body.id].sort());
    const changed = await asTeamAdmin('PATCH', `/admin/v1/budgets/${made['key red']}`, { usd: 2 });
    assert.deepEqual([changed.status, changed.body.usd], [200, 2]);
    assert.equal((await asTeamAdmin('DELETE', `/admin/v1/budgets/${own.body.id}`)).status, 204);
    const audit = await gateway.admin('GET', `/admin/v1/audit?target=${own.body.id}`);
    assert.deepEqual(audit.body.data.map((entry: { action: string }) => entry.action).sort(), ['budget.create', 'budget.delete']);

    // Its team's own budget and end users' are an administrator's: refused.
    for (const [method, path, body] of [
      ['POST', '/admin/v1/budgets', { level: 'team', target: 'red', usd: 100, period: 'month' }],
      ['POST', '/admin/v1/budgets', { level: 'end_user', target: 'student-8', usd: 1, period: 'month' }],
      ['PATCH', `/admin/v1/budgets/${made['team red']}`, { usd: 1000 }],
      ['DELETE', `/admin/v1/budgets/${made['team red']}`, undefined],
    ] as const) {
      const answer = await asTeamAdmin(method, path, body);
      assert.equal(answer.status, 403, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'insufficient_role');
    }
    // Another team's and end users' budgets are answered as unknown ones.
    for (const [method, path, body] of [
      ['PATCH', `/admin/v1/budgets/${made['team blue']}`, { usd: 0.5 }],
      ['PATCH', `/admin/v1/budgets/${made['project blue']}`, { usd: 0.5 }],
      ['DELETE', `/admin/v1/budgets/${made['key blue']}`, undefined],
      ['DELETE', `/admin/v1/budgets/${made['end user']}`, undefined],
    ] as const) {
      const answer = await asTeamAdmin(method, path, body);
      assert.equal(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, 'not_found');
    }
    for (const [level, target] of [['project', 'p-blue'], ['key', keys.blue]] as const) {
      const answer = await asTeamAdmin('POST', '/admin/v1/budgets', { level, target, usd: 1, period: 'month' });
      assert.deepEqual([answer.status, answer.body.error.param, answer.body.error.message], [400, 'target', `There is no ${level} "${target}".`]);
    }
    const untouched = await gateway.admin('GET', '/admin/v1/budgets');
    assert.equal(untouched.body.data.length, 6);
    assert.ok(untouched.body.data.every((budget: { id: string; usd: number }) => budget.usd === 10 || budget.id === made['key red']));
    for (const id of Object.values(made)) assert.equal((await gateway.admin('DELETE', `/admin/v1/budgets/${id}`)).status, 204);
    await db.deleteFrom('budget_alerts').execute();
  });

  test('is refused the routes of administrators (403)', async () => {
    for (const path of ['/admin/v1/users', '/admin/v1/audit', '/admin/v1/mcp/servers']) {
      const answer = await asTeamAdmin('GET', path);
      assert.equal(answer.status, 403, path);
      assert.equal(answer.body.error.code, 'insufficient_role');
    }
  });
});

describe('roles and teams of an account', () => {
  test('are changed by an administrator and audited; a team admin needs known teams', async () => {
    const user = await gateway.gateway.context.accounts.createUser('moved@example.com', PASSWORD, 'viewer');
    const moved = await gateway.admin('PATCH', `/admin/v1/users/${user.id}`, { role: 'team_admin', team_ids: ['blue', 'red'] });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual([moved.body.role, moved.body.team_ids], ['team_admin', ['blue', 'red']]);
    const audit = await gateway.admin('GET', `/admin/v1/audit?target=${user.id}&action=user.update`);
    assert.equal(audit.body.data.length, 1);
    assert.deepEqual([audit.body.data[0].before.role, audit.body.data[0].after.role], ['viewer', 'team_admin']);
    for (const [body, param] of [
      [{ role: 'team_admin' }, 'team_ids'],
      [{ role: 'team_admin', team_ids: ['green'] }, 'team_ids'],
      [{ role: 'viewer', team_ids: ['red'] }, 'team_ids'],
    ] as const) {
      const refused = await gateway.admin('PATCH', `/admin/v1/users/${user.id}`, body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.param, param);
    }
  });
});
