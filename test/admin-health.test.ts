import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { sendJson as send } from './helpers/admin-http.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * The health page's, the overview's and `GET /admin/v1/status`'s view of the providers: recent
 * calls, error rate and latency from the request log, the last failures with their request ids,
 * routed deployments and their cooldowns; and who may read them.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many response shapes; each asserts what it reads
type Loose = any;

const PASSWORD = 'a long enough password 1';


describe('provider health, the overview and status', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let failedId: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
    const created = await send(gateway, 'POST', '/admin/v1/keys', { name: 'course key', scopes: ['model:request'] });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const key = created.body.secret as string;
    const chat = () => send(gateway, 'POST', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], user: 'student-1' }, { authorization: `Bearer ${key}` });
    for (let index = 0; index < 3; index += 1) assert.equal((await chat()).status, 200);
    fake.failNext('/v1/chat/completions', 500, 'upstream broke');
    const failed = await chat();
    assert.equal(failed.status, 502);
    failedId = failed.requestId;
    await loggedRecord(gateway, failedId);
    // A routed model, with a cooldown of one failure.
    const routed = await send(gateway, 'PUT', '/admin/v1/routing/gpt-4o', { deployments: [{ provider: 'openai', name: 'primary' }], cooldown: { failures: 1, durationMs: 600_000 } });
    assert.equal(routed.status, 200, JSON.stringify(routed.body));
    fake.failNext('/v1/chat/completions', 500, 'upstream broke again');
    const cooled = await send(gateway, 'POST', '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Bearer ${key}` });
    assert.equal(cooled.status, 502);
    await loggedRecord(gateway, cooled.requestId);
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('each provider: credential, recent calls and errors, latency, last failures; deployments and cooldowns', async () => {
    const health = await send(gateway, 'GET', '/admin/v1/health');
    assert.equal(health.status, 200, JSON.stringify(health.body));
    const openai = health.body.providers.find((provider: Loose) => provider.name === 'openai');
    assert.deepEqual([openai.credential, openai.requests, openai.errors], ['set', 5, 2]);
    assert.equal(openai.error_rate, 0.4);
    assert.equal(typeof openai.latency_p50_ms, 'number');
    assert.ok(openai.latency_p95_ms >= openai.latency_p50_ms);
    assert.ok(openai.last_failures.some((failure: Loose) => failure.request_id === failedId && failure.status === 502));
    assert.deepEqual(openai.cooling_deployments, ['gpt-4o/primary']);
    assert.deepEqual(health.body.deployments, [{ model: 'gpt-4o', deployment: 'primary', provider: 'openai', weight: 1, cooling: true }]);
    const mistral = health.body.providers.find((provider: Loose) => provider.name === 'mistral');
    assert.deepEqual([mistral.credential, mistral.missing_variable, mistral.requests], ['missing', 'MISTRAL_API_KEY', 0]);
  });

  test('status shows the same: recent calls per provider and the deployments', async () => {
    const status = await send(gateway, 'GET', '/admin/v1/status');
    const openai = status.body.providers.find((provider: Loose) => provider.name === 'openai');
    assert.deepEqual([openai.recent.requests, openai.recent.errors], [5, 2]);
    assert.ok(openai.recent.last_failures.some((failure: Loose) => failure.request_id === failedId));
    assert.equal(status.body.deployments[0].cooling, true);
  });

  test('the overview: totals, buckets, top models and keys by name', async () => {
    const overview = await send(gateway, 'GET', '/admin/v1/overview?hours=24');
    assert.equal(overview.status, 200, JSON.stringify(overview.body));
    assert.deepEqual([overview.body.totals.requests, overview.body.totals.errors], [5, 2]);
    assert.equal(overview.body.bucket_minutes, 60);
    assert.ok(overview.body.buckets.length >= 24);
    assert.equal(overview.body.buckets.reduce((sum: number, bucket: Loose) => sum + bucket.requests, 0), 5);
    assert.equal(overview.body.top_models[0].model, 'gpt-4o-mini');
    assert.deepEqual([overview.body.top_keys[0].name, overview.body.top_keys[0].requests], ['course key', 5]);
    assert.equal(overview.body.health.providers.find((provider: Loose) => provider.name === 'openai').errors, 2);
  });

  test('the overview: top teams and end users, and the budgets nearest their limit', async () => {
    const roomy = await send(gateway, 'POST', '/admin/v1/budgets', { level: 'project', target: 'default', period: 'month', tokens: 1_000_000 });
    assert.equal(roomy.status, 201, JSON.stringify(roomy.body));
    const tight = await send(gateway, 'POST', '/admin/v1/budgets', { level: 'team', target: 'default', period: 'month', tokens: 100 });
    assert.equal(tight.status, 201, JSON.stringify(tight.body));
    const overview = await send(gateway, 'GET', '/admin/v1/overview');
    assert.equal(overview.status, 200, JSON.stringify(overview.body));
    assert.deepEqual(
      overview.body.top_teams.map((team: Loose) => [team.team_id, team.requests]),
      [['default', 5]],
    );
    // Only the chats that named an end user count under one.
    assert.deepEqual(
      overview.body.top_end_users.map((user: Loose) => [user.end_user, user.requests]),
      [['student-1', 4]],
    );
    const nearest = overview.body.budgets_nearest_limit;
    assert.deepEqual(
      nearest.map((budget: Loose) => budget.id),
      [tight.body.id, roomy.body.id],
    );
    assert.ok(nearest[0].spent_tokens > 0);
    assert.equal(nearest[0].used, nearest[0].spent_tokens / 100);
    assert.ok(nearest[1].used < nearest[0].used);
    for (const budget of [roomy, tight]) assert.equal((await send(gateway, 'DELETE', `/admin/v1/budgets/${budget.body.id}`)).status, 204);
  });

  test('a viewer may read the overview and health; a team admin may not', async () => {
    await gateway.gateway.context.accounts.createUser('viewer@example.com', PASSWORD, 'viewer');
    await gateway.gateway.context.accounts.createUser('lead@example.com', PASSWORD, 'team_admin', ['default']);
    for (const [email, expected] of [['viewer@example.com', 200], ['lead@example.com', 403]] as const) {
      const signedIn = await fetch(`${gateway.url}/admin/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: PASSWORD }) });
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      for (const path of ['/admin/v1/overview', '/admin/v1/health']) {
        assert.equal((await send(gateway, 'GET', path, undefined, { cookie })).status, expected, `${email} ${path}`);
      }
    }
  });
});
