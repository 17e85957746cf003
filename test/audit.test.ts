import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteOptions } from 'fastify';
import type { RouteModule } from '../src/server/app.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestMcpServer, type TestMcpServer } from './helpers/mcp-servers.js';
import { TEST_ADMIN_TOKEN, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/**
 * The audit log over HTTP on both databases: every admin route that writes records who did
 * what to which target, before and after, never a secret; the list's filters and paging; the
 * exports; the retention.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
type Loose = any;

interface Answer {
  status: number;
  body: Loose;
  text: string;
  requestId: string;
  headers: Headers;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Every route the app registers, as Fastify's route table has it (an onRoute hook registered before all of them). */
function routeTable(into: RouteOptions[]): RouteModule {
  return (app) => {
    app.addHook('onRoute', (route) => {
      into.push(route as RouteOptions);
    });
  };
}

function graph(name: string) {
  return {
    version: 1,
    name,
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'out' },
      { id: 'out', type: 'output', config: { text: 'echo {{input}}' } },
    ],
  };
}

for (const backend of STORAGE_BACKENDS) {
  describe(`audit log (${backend.name})`, { skip: backend.skip }, () => {
    let storage: SharedStorage;
    let gateway: TestGateway;
    let mcpServer: TestMcpServer;
    const routes: RouteOptions[] = [];

    before(async () => {
      storage = await backend.create();
      mcpServer = await startTestMcpServer({ tools: ['echo'] });
      gateway = await startTestGateway({
        env: storage.env,
        dataDir: storage.dataDir,
        routes: [routeTable(routes), ...ROUTE_MODULES],
        configFile: { mcp: { allowAddresses: ['127.0.0.0/8'], servers: [] } },
      });
    });
    after(async () => {
      await gateway.close();
      await mcpServer.stop();
      await storage.dispose();
    });

    async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }): Promise<Answer> {
      const response = await fetch(`${gateway.url}${path}`, {
        method,
        headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      const contentType = response.headers.get('content-type') ?? '';
      return {
        status: response.status,
        text,
        body: text.length > 0 && contentType.includes('application/json') ? JSON.parse(text) : null,
        requestId: response.headers.get('x-request-id') ?? '',
        headers: response.headers,
      };
    }

    async function ok(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
      const answer = await call(method, path, body, headers);
      assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${answer.text}`);
      return answer;
    }

    async function entryOf(requestId: string): Promise<Loose> {
      const page = await ok('GET', '/admin/v1/audit?limit=500');
      return page.body.data.find((entry: Loose) => entry.request_id === requestId);
    }

    test('every admin route that writes records an audit entry (a new route without one fails here)', async () => {
      const writes = routes.filter((route) => route.url.startsWith('/admin/v1') && [route.method].flat().some((method) => !SAFE.has(method)));
      assert.ok(writes.length > 15, `only ${writes.length} admin write routes found`);

      const state: Record<string, string> = {};
      const secrets: string[] = [];
      // How to make each route succeed, in an order where each finds what it needs.
      const cases: [string, () => Promise<Answer>][] = [
        ['POST /admin/v1/users', async () => {
          const answer = await ok('POST', '/admin/v1/users', { email: 'ops@example.com', password: 'a long enough password 1' });
          state.user = answer.body.id;
          return answer;
        }],
        ['POST /admin/v1/users/:id/disable', () => ok('POST', `/admin/v1/users/${state.user}/disable`)],
        ['POST /admin/v1/users/:id/enable', () => ok('POST', `/admin/v1/users/${state.user}/enable`)],
        ['POST /admin/v1/users/:id/password', () => ok('POST', `/admin/v1/users/${state.user}/password`, { password: 'another long password 2' })],
        ['PATCH /admin/v1/users/:id', () => ok('PATCH', `/admin/v1/users/${state.user}`, { role: 'viewer' })],
        ['PATCH /admin/v1/users/:id', () => ok('PATCH', `/admin/v1/users/${state.user}`, { role: 'admin' })],
        ['POST /admin/v1/session', async () => {
          const answer = await ok('POST', '/admin/v1/session', { email: 'ops@example.com', password: 'another long password 2' }, {});
          state.cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0]!;
          state.csrf = answer.body.csrf_token;
          return answer;
        }],
        ['POST /admin/v1/projects', () => ok('POST', '/admin/v1/projects', { id: 'audited' })],
        ['PATCH /admin/v1/projects/:id', () => ok('PATCH', '/admin/v1/projects/audited', { allowed_tools: ['files__*'] })],
        ['POST /admin/v1/teams', () => ok('POST', '/admin/v1/teams', { id: 'audited-team' })],
        ['PATCH /admin/v1/teams/:id', () => ok('PATCH', '/admin/v1/teams/audited-team', { name: 'Audited team' })],
        ['PATCH /admin/v1/projects/:id', () => ok('PATCH', '/admin/v1/projects/audited', { team_id: 'audited-team' })],
        ['PATCH /admin/v1/projects/:id', () => ok('PATCH', '/admin/v1/projects/audited', { team_id: 'default' })],
        ['DELETE /admin/v1/teams/:id', () => ok('DELETE', '/admin/v1/teams/audited-team')],
        ['POST /admin/v1/keys', async () => {
          // Made with the session: its actor is the account.
          const answer = await ok('POST', '/admin/v1/keys', { name: 'audited', project: 'audited', scopes: ['model:request'] }, { cookie: state.cookie!, 'x-csrf-token': state.csrf! });
          state.key = answer.body.id;
          secrets.push(answer.body.secret);
          return answer;
        }],
        ['PATCH /admin/v1/keys/:id', () => ok('PATCH', `/admin/v1/keys/${state.key}`, { name: 'renamed', limits: { rpm: 5 } })],
        ['POST /admin/v1/keys/:id/rotate', async () => {
          const answer = await ok('POST', `/admin/v1/keys/${state.key}/rotate`, { grace_period_seconds: 60 });
          secrets.push(answer.body.secret);
          return answer;
        }],
        ['POST /admin/v1/keys/:id/pause', () => ok('POST', `/admin/v1/keys/${state.key}/pause`)],
        ['POST /admin/v1/keys/:id/resume', () => ok('POST', `/admin/v1/keys/${state.key}/resume`)],
        ['POST /admin/v1/projects/:id/keys/pause', () => ok('POST', '/admin/v1/projects/audited/keys/pause')],
        ['POST /admin/v1/projects/:id/keys/resume', () => ok('POST', '/admin/v1/projects/audited/keys/resume')],
        ['PUT /admin/v1/agents/:slug', () => ok('PUT', '/admin/v1/agents/echo', { graph: graph('Echo') })],
        ['POST /admin/v1/agents/:slug/publish', () => ok('POST', '/admin/v1/agents/echo/publish', {})],
        ['POST /admin/v1/agents/:slug/grants', () => ok('POST', '/admin/v1/agents/echo/grants', { key_id: state.key })],
        ['DELETE /admin/v1/agents/:slug/grants/:key_id', () => ok('DELETE', `/admin/v1/agents/echo/grants/${state.key}`)],
        ['POST /admin/v1/mcp/servers', () => ok('POST', '/admin/v1/mcp/servers', { name: 'files', url: mcpServer.url })],
        ['DELETE /admin/v1/mcp/servers/:name', () => ok('DELETE', '/admin/v1/mcp/servers/files')],
        ['DELETE /admin/v1/cache', () => ok('DELETE', '/admin/v1/cache')],
        ['POST /admin/v1/guardrails', () => ok('POST', '/admin/v1/guardrails', { name: 'audited-words', check: 'keywords', apply: { projects: ['audited'] }, options: { words: ['nightingale'] } })],
        ['PATCH /admin/v1/guardrails/:name', () => ok('PATCH', '/admin/v1/guardrails/audited-words', { action: 'log' })],
        ['DELETE /admin/v1/guardrails/:name', () => ok('DELETE', '/admin/v1/guardrails/audited-words')],
        ['POST /admin/v1/providers', () => {
          secrets.push(`sk-mistral-${'FAKEfake00'.repeat(3)}`);
          return ok('POST', '/admin/v1/providers', { name: 'mistral', kind: 'mistral', settings: { apiKey: secrets.at(-1) } });
        }],
        ['PATCH /admin/v1/providers/:name', () => ok('PATCH', '/admin/v1/providers/mistral', { settings: { baseUrl: 'https://mistral.example.com/v1' } })],
        ['DELETE /admin/v1/providers/:name', () => ok('DELETE', '/admin/v1/providers/mistral')],
        ['PUT /admin/v1/models/settings/:id', () => ok('PUT', '/admin/v1/models/settings/gpt-4o', { pricing: { input_per_million: 1, output_per_million: 2 }, note: 'negotiated' })],
        ['DELETE /admin/v1/models/settings/:id', () => ok('DELETE', '/admin/v1/models/settings/gpt-4o')],
        ['PUT /admin/v1/models/aliases/:alias', () => ok('PUT', '/admin/v1/models/aliases/quick', { target: 'gpt-4o-mini' })],
        ['DELETE /admin/v1/models/aliases/:alias', () => ok('DELETE', '/admin/v1/models/aliases/quick')],
        ['PUT /admin/v1/routing/:model', () => ok('PUT', '/admin/v1/routing/gpt-4o', { retries: 2 })],
        ['DELETE /admin/v1/routing/:model', () => ok('DELETE', '/admin/v1/routing/gpt-4o')],
        ['POST /admin/v1/budgets', async () => {
          const answer = await ok('POST', '/admin/v1/budgets', { level: 'project', target: 'audited', usd: 10, period: 'month' });
          state.budget = answer.body.id;
          return answer;
        }],
        ['PATCH /admin/v1/budgets/:id', () => ok('PATCH', `/admin/v1/budgets/${state.budget}`, { usd: 20 })],
        ['DELETE /admin/v1/budgets/:id', () => ok('DELETE', `/admin/v1/budgets/${state.budget}`)],
        ['POST /admin/v1/keys/:id/revoke', () => ok('POST', `/admin/v1/keys/${state.key}/revoke`)],
        ['POST /admin/v1/projects/:id/keys/revoke', () => ok('POST', '/admin/v1/projects/audited/keys/revoke')],
        ['DELETE /admin/v1/session', () => ok('DELETE', '/admin/v1/session', undefined, { cookie: state.cookie!, 'x-csrf-token': state.csrf! })],
      ];
      const covered = new Map(cases);
      for (const route of writes) {
        for (const method of [route.method].flat().filter((m) => !SAFE.has(m))) {
          const name = `${method} ${route.url}`;
          const exempt = (route.config as { auditExempt?: string } | undefined)?.auditExempt;
          if (exempt !== undefined) {
            assert.ok(exempt.length > 10, `${name}: auditExempt must say why`);
            continue;
          }
          assert.ok(covered.has(name), `${name} writes but has no case here: record an audit entry in the route (recordChange) and add a case, or give it config.auditExempt with the reason`);
        }
      }
      for (const [name, run] of cases) {
        const answer = await run();
        const entry = await entryOf(answer.requestId);
        assert.ok(entry !== undefined, `${name} recorded no audit entry`);
        assert.ok(!JSON.stringify(entry).includes('password 2'), `${name}: a password reached the audit log`);
        for (const secret of secrets) assert.ok(!JSON.stringify(entry).includes(secret), `${name}: a key's secret reached the audit log`);
      }

      // What the entries say: actor, target, before and after.
      const created = (await ok('GET', `/admin/v1/audit?action=key.create&target=${state.key}`)).body.data;
      assert.equal(created.length, 1);
      assert.deepEqual(created[0].actor, { kind: 'user', name: 'ops@example.com', id: state.user });
      assert.deepEqual(created[0].target, { type: 'key', id: state.key });
      assert.equal(created[0].before, null);
      assert.equal(created[0].after.name, 'audited');
      assert.equal(created[0].after.secret, undefined);
      const updated = (await ok('GET', `/admin/v1/audit?action=key.update`)).body.data[0];
      assert.equal(updated.actor.kind, 'token');
      assert.equal(updated.actor.name, 'admin-token');
      assert.equal(updated.before.name, 'audited');
      assert.equal(updated.after.name, 'renamed');
      assert.deepEqual([updated.before.limits.rpm, updated.after.limits.rpm], [null, 5]);
      const revoked = (await ok('GET', `/admin/v1/audit?action=key.revoke`)).body.data[0];
      assert.deepEqual([revoked.before.status, revoked.after.status], ['active', 'revoked']);
      assert.match(revoked.at, /^\d{4}-\d{2}-\d{2}T/);
      assert.equal(revoked.address, '127.0.0.1');
      const disabled = (await ok('GET', `/admin/v1/audit?action=user.disable`)).body.data[0];
      assert.deepEqual([disabled.before.disabled, disabled.after.disabled], [false, true]);
      const paused = (await ok('GET', '/admin/v1/audit?action=project.pause_keys')).body.data[0];
      assert.deepEqual([paused.target, paused.before.keys, paused.after.keys], [{ type: 'project', id: 'audited' }, [{ id: state.key, status: 'active' }], [{ id: state.key, status: 'paused' }]]);
      const signIn = (await ok('GET', `/admin/v1/audit?action=session.sign_in`)).body.data[0];
      assert.equal(signIn.actor.name, 'ops@example.com');
    });

    test('a validation (exempt) and a refused change record nothing', async () => {
      const answers = await Promise.all([
        call('POST', '/admin/v1/agents/validate', { graph: graph('Check') }),
        call('POST', '/admin/v1/keys/key_doesnotexist/pause'),
      ]);
      assert.equal(answers[0]!.status, 200);
      assert.equal(answers[1]!.status, 404);
      for (const answer of answers) assert.equal(await entryOf(answer.requestId), undefined);
    });

    test('filters by actor, action (or a target type), target and time; pages newest first', async () => {
      for (let index = 0; index < 5; index += 1) await ok('POST', '/admin/v1/keys', { name: `paged-${index}`, scopes: ['model:request'] });
      const first = await ok('GET', '/admin/v1/audit?actor=admin-token&action=key.create&limit=2');
      assert.equal(first.body.data.length, 2);
      assert.equal(first.body.has_more, true);
      assert.deepEqual(first.body.data.map((entry: Loose) => entry.after.name), ['paged-4', 'paged-3']);
      const second = await ok('GET', `/admin/v1/audit?actor=admin-token&action=key.create&limit=2&cursor=${first.body.next_cursor}`);
      assert.deepEqual(second.body.data.map((entry: Loose) => entry.after.name), ['paged-2', 'paged-1']);

      const byType = (await ok('GET', '/admin/v1/audit?action=user&limit=500')).body.data.map((entry: Loose) => entry.action);
      assert.ok(byType.length >= 4 && byType.every((action: string) => action.startsWith('user.')), byType.join());
      assert.deepEqual((await ok('GET', '/admin/v1/audit?target_type=mcp_server')).body.data.map((entry: Loose) => entry.action), ['mcp_server.remove', 'mcp_server.add']);
      assert.equal((await ok('GET', '/admin/v1/audit?actor=OPS@example.com&action=key.create')).body.data.length, 1);
      assert.equal((await ok('GET', '/admin/v1/audit?since=1h&action=key.create&limit=500')).body.data.length, 6);
      assert.equal((await ok('GET', '/admin/v1/audit?until=2020-01-01')).body.data.length, 0);

      for (const [query, param] of [['since=yesterday', 'since'], ['cursor=nope', 'cursor'], ['limit=0', null], ['action=Key;drop', null], ['since=1h&until=2h', 'until']] as const) {
        const refused = await call('GET', `/admin/v1/audit?${query}`);
        assert.equal(refused.status, 400, `${query}: ${refused.text}`);
        assert.equal(refused.body.error.code, 'invalid_body');
        if (param !== null) assert.equal(refused.body.error.param, param);
      }
    });

    test('exports the matching entries as JSON lines and as CSV', async () => {
      const jsonl = await ok('GET', '/admin/v1/audit/export?action=key.create');
      assert.match(jsonl.headers.get('content-type') ?? '', /application\/x-ndjson/);
      const lines = jsonl.text.trim().split('\n').map((line) => JSON.parse(line));
      assert.equal(lines.length, 6);
      assert.ok(lines.every((line) => line.action === 'key.create'));
      assert.equal(lines[0].after.name, 'paged-4');

      const csv = await ok('GET', '/admin/v1/audit/export?format=csv&target_type=key&action=key.update');
      assert.match(csv.headers.get('content-type') ?? '', /text\/csv/);
      const rows = csv.text.trim().split('\r\n');
      assert.equal(rows[0], 'at,id,actor_kind,actor,actor_id,action,target_type,target_id,before,after,request_id,address');
      assert.equal(rows.length, 2);
      assert.match(rows[1]!, /,token,admin-token,,key\.update,key,key_[0-9a-f]+,"\{""id"":/);
    });

    test('a viewer may not read the audit log', async () => {
      await ok('POST', '/admin/v1/users', { email: 'viewer@example.com', password: 'a viewer password 3', role: 'viewer' });
      const signedIn = await ok('POST', '/admin/v1/session', { email: 'viewer@example.com', password: 'a viewer password 3' }, {});
      const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
      const refused = await call('GET', '/admin/v1/audit', undefined, { cookie });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'insufficient_role');
    });

    test('entries older than audit.retentionDays are deleted, newer ones kept', async () => {
      const { audit } = gateway.gateway.context;
      const day = 86_400_000;
      await audit.record({ kind: 'system' }, { action: 'config.reload', target: { type: 'config', id: 'old.yaml' } }, {}, Date.now() - 400 * day);
      await audit.record({ kind: 'system' }, { action: 'config.reload', target: { type: 'config', id: 'recent.yaml' } }, {}, Date.now() - 300 * day);
      assert.equal((await ok('GET', '/admin/v1/audit?actor=system')).body.data.length, 2);
      const deleted = await audit.deleteOlderThan(Date.now() - gateway.config.audit.retentionDays * day, 1000);
      assert.equal(deleted, 1);
      assert.deepEqual((await ok('GET', '/admin/v1/audit?actor=system')).body.data.map((entry: Loose) => entry.target.id), ['recent.yaml']);
    });
  });
}
