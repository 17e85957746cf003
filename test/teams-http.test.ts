import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Teams over the admin API: create, rename, move a project, delete (refused while the team
 * holds projects, and for `default`); every change audited with before and after; a team admin
 * reads its own teams only and changes none; a session's change needs its CSRF token.
 */

const PASSWORD = 'team admin password 0123';

let gateway: TestGateway;
let lead: { cookie: string; csrf: string };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test asserts what it reads
async function asLead(method: string, path: string, body?: unknown, csrf = true): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { cookie: lead.cookie, ...(csrf ? { 'x-csrf-token': lead.csrf } : {}) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await gateway.fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await response.text();
  return { status: response.status, body: text.length > 0 ? JSON.parse(text) : null };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- audit entries as the API answers them
async function lastAudit(action: string): Promise<any> {
  const page = await gateway.admin('GET', `/admin/v1/audit?action=${action}`);
  assert.equal(page.status, 200, JSON.stringify(page.body));
  return page.body.data[0];
}

before(async () => {
  gateway = await startTestGateway();
  for (const id of ['red', 'blue']) assert.equal((await gateway.admin('POST', '/admin/v1/teams', { id, name: `${id[0]!.toUpperCase()}${id.slice(1)}` })).status, 201);
  for (const team of ['red', 'blue']) {
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: `p-${team}`, team_id: team })).status, 201);
    const key = await gateway.admin('POST', '/admin/v1/keys', { name: `${team} key`, project: `p-${team}`, scopes: ['model:request'] });
    assert.equal(key.status, 201);
    // A keyed request refused before any provider (unknown model): logged under the key.
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.body.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.text();
  }
  await gateway.gateway.context.logs.writer.flush();
  await gateway.gateway.context.accounts.createUser('red-lead@example.com', PASSWORD, 'team_admin', ['red']);
  const signIn = await gateway.fetch('/admin/v1/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'red-lead@example.com', password: PASSWORD }),
  });
  const view = (await signIn.json()) as { csrf_token: string };
  assert.equal(signIn.status, 200);
  lead = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: view.csrf_token };
});

after(async () => {
  await gateway.close();
});

describe('keys by name in the request log and usage', () => {
  test('the list and a record name the key; a filter takes a name', async () => {
    const list = await gateway.admin('GET', '/admin/v1/logs?key_name=red%20key');
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.deepEqual(list.body.data.map((record: { key_name: string }) => record.key_name), ['red key']);
    const record = await gateway.admin('GET', `/admin/v1/logs/${list.body.data[0].request_id}`);
    assert.equal(record.body.key_name, 'red key');
    assert.deepEqual((await gateway.admin('GET', '/admin/v1/logs?key_name=nobody')).body.data, []);
    const usage = await gateway.admin('GET', '/admin/v1/usage?by=key&key_name=blue%20key');
    assert.deepEqual(usage.body.data.map((row: { key_name: string; requests: number }) => [row.key_name, row.requests]), [['blue key', 1]]);
    const byTeam = await gateway.admin('GET', '/admin/v1/usage?by=team');
    assert.deepEqual(byTeam.body.data.map((row: { team_id: string; team_name: string }) => [row.team_id, row.team_name]), [['blue', 'Blue'], ['red', 'Red']]);
    const tooLong = await gateway.admin('GET', `/admin/v1/logs?key_name=${'x'.repeat(201)}`);
    assert.deepEqual([tooLong.status, tooLong.body.error.param], [400, 'key_name']);
  });
});

describe('teams', () => {
  test('lists every team with its projects and key counts; creation is audited', async () => {
    const list = await gateway.admin('GET', '/admin/v1/teams');
    assert.equal(list.status, 200);
    const red = list.body.data.find((team: { id: string }) => team.id === 'red');
    assert.deepEqual(list.body.data.map((team: { id: string }) => team.id).slice(0, 1), ['default']);
    assert.deepEqual([red.name, red.key_count, red.projects], ['Red', 1, [{ id: 'p-red', name: 'p-red', key_count: 1 }]]);
    const created = await lastAudit('team.create');
    assert.deepEqual([created.target, created.before, created.after], [{ type: 'team', id: 'blue' }, null, { id: 'blue', name: 'Blue' }]);
  });

  test('validation names the field; a duplicate id or name is a 409', async () => {
    for (const [body, param] of [
      [{ id: 'Bad Id' }, 'id'],
      [{ id: 'ok', name: '' }, 'name'],
      [{ id: 'ok', extra: 1 }, null],
    ] as const) {
      const answer = await gateway.admin('POST', '/admin/v1/teams', body);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'invalid_body');
      if (param !== null) assert.match(answer.body.error.message, new RegExp(param));
    }
    const again = await gateway.admin('POST', '/admin/v1/teams', { id: 'red' });
    assert.deepEqual([again.status, again.body.error.code, again.body.error.param], [409, 'conflict', 'id']);
    const sameName = await gateway.admin('POST', '/admin/v1/teams', { id: 'crimson', name: 'Red' });
    assert.deepEqual([sameName.status, sameName.body.error.param], [409, 'name']);
    const moveNowhere = await gateway.admin('PATCH', '/admin/v1/projects/p-red', { team_id: 'nowhere' });
    assert.deepEqual([moveNowhere.status, moveNowhere.body.error.code, moveNowhere.body.error.param], [404, 'not_found', 'team_id']);
    const empty = await gateway.admin('PATCH', '/admin/v1/projects/p-red', {});
    assert.equal(empty.status, 400);
  });

  test('rename keeps the id and records before and after', async () => {
    const renamed = await gateway.admin('PATCH', '/admin/v1/teams/blue', { name: 'Blue squad' });
    assert.deepEqual([renamed.status, renamed.body.id, renamed.body.name, renamed.body.key_count], [200, 'blue', 'Blue squad', 1]);
    const entry = await lastAudit('team.rename');
    assert.deepEqual([entry.before.name, entry.after.name], ['Blue', 'Blue squad']);
    assert.equal((await gateway.admin('PATCH', '/admin/v1/teams/nowhere', { name: 'x' })).status, 404);
  });

  test('a team holding projects is not deleted (the message names them); moved out, it is', async () => {
    const refused = await gateway.admin('DELETE', '/admin/v1/teams/blue');
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'conflict']);
    assert.match(refused.body.error.message, /"p-blue"/);
    const moved = await gateway.admin('PATCH', '/admin/v1/projects/p-blue', { team_id: 'default' });
    assert.deepEqual([moved.status, moved.body.team_id], [200, 'default']);
    const entry = await lastAudit('project.move');
    assert.deepEqual([entry.target, entry.before.team_id, entry.after.team_id], [{ type: 'project', id: 'p-blue' }, 'blue', 'default']);
    assert.equal((await gateway.admin('DELETE', '/admin/v1/teams/blue')).status, 204);
    const deleted = await lastAudit('team.delete');
    assert.deepEqual([deleted.before, deleted.after], [{ id: 'blue', name: 'Blue squad' }, null]);
    assert.equal((await gateway.admin('GET', '/admin/v1/teams/blue')).status, 404);
    const byDefault = await gateway.admin('DELETE', '/admin/v1/teams/default');
    assert.deepEqual([byDefault.status, byDefault.body.error.code], [409, 'conflict']);
  });

  test("a team admin reads its own teams only and changes none; another team's is unknown", async () => {
    await gateway.admin('POST', '/admin/v1/teams', { id: 'green' });
    const list = await asLead('GET', '/admin/v1/teams');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data.map((team: { id: string }) => team.id), ['red']);
    assert.equal((await asLead('GET', '/admin/v1/teams/red')).status, 200);
    const other = await asLead('GET', '/admin/v1/teams/green');
    assert.deepEqual([other.status, other.body.error.code], [404, 'not_found']);
    for (const [method, path, body] of [
      ['POST', '/admin/v1/teams', { id: 'mine' }],
      ['PATCH', '/admin/v1/teams/red', { name: 'Ours' }],
      ['DELETE', '/admin/v1/teams/green', undefined],
      ['PATCH', '/admin/v1/projects/p-red', { team_id: 'green' }],
    ] as const) {
      const answer = await asLead(method, path, body);
      assert.deepEqual([answer.status, answer.body.error.code], [403, 'insufficient_role'], `${method} ${path}`);
    }
    assert.equal((await gateway.admin('GET', '/admin/v1/teams/green')).status, 200);
  });

  test("a session's change without the CSRF token is refused and changes nothing", async () => {
    await gateway.gateway.context.accounts.createUser('ops@example.com', PASSWORD, 'admin');
    const signIn = await gateway.fetch('/admin/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ops@example.com', password: PASSWORD }),
    });
    const csrf = ((await signIn.json()) as { csrf_token: string }).csrf_token;
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const send = (headers: Record<string, string>) =>
      gateway.fetch('/admin/v1/teams', { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ id: 'sneaky' }) });
    const refused = await send({});
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'csrf_token_invalid');
    assert.equal((await gateway.admin('GET', '/admin/v1/teams/sneaky')).status, 404);
    const made = await send({ 'x-csrf-token': csrf });
    assert.equal(made.status, 201);
    const entry = await lastAudit('team.create');
    assert.deepEqual([entry.actor.kind, entry.actor.name], ['user', 'ops@example.com']);
  });
});
