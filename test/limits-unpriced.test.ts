import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';

const UPSTREAM = { OPENAI_API_KEY: 'sk-upstream-unpriced-test-00000000000' };

interface ErrorBody {
  error: { code: string; type: string; message: string; param: string | null };
}

async function post(gateway: TestGateway, key: string, path: string, body: unknown) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, requestId: response.headers.get('x-request-id') ?? '', body: (await response.json()) as ErrorBody };
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 });

/** Provider calls the fake received, of every endpoint. */
const upstreamCalls = (fake: OpenAIFake) => fake.server.requests.filter((request) => request.method === 'POST').length;

async function withGateway(run: (gateway: TestGateway, fake: OpenAIFake) => Promise<void>, configFile?: Record<string, unknown>): Promise<void> {
  const fake = await startOpenAIFake();
  const gateway = await startTestGateway({ env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1` }, ...(configFile !== undefined ? { configFile } : {}) });
  try {
    await run(gateway, fake);
  } finally {
    await gateway.close();
    await fake.server.close();
  }
}

describe('a monthly cost cap never serves a model it cannot price', () => {
  test('the dated gpt-4o-mini snapshot is priced as gpt-4o-mini; o1-pro (served by prefix) has no price', async () => {
    await withGateway(async (gateway) => {
    const { catalog } = gateway.gateway.context;
    const snapshot = catalog.resolve('gpt-4o-mini-2024-07-18', { mode: 'chat' });
    assert.equal(snapshot.id, 'gpt-4o-mini');
    assert.equal(snapshot.model.upstreamId, 'gpt-4o-mini-2024-07-18');
    assert.notEqual(snapshot.model.entry.pricing, null);
    assert.equal(catalog.resolve('o1-pro', { mode: 'chat' }).model.entry.pricing, null);
    });
  });

  test('a capped key is refused an unpriced model on every format, before any provider call; priced snapshots are served and cost counted', async () => {
    await withGateway(async (gateway, fake) => {
      const key = await gateway.createKey({ monthlyCostUsd: 0.01 });
      const refusals = [
        await post(gateway, key, '/v1/chat/completions', chat('o1-pro')),
        await post(gateway, key, '/v1/responses', { model: 'o1-pro', input: 'hi' }),
        await post(gateway, key, '/v1/messages', { model: 'o1-pro', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
        await post(gateway, key, '/v1/chat/vetting', { model: 'o1-pro', messages: [{ role: 'user', content: 'hi' }] }),
      ];
      for (const refused of refusals) {
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        // The Messages API's error body has no code; the others name it.
        if (refused.body.error.code !== undefined) assert.equal(refused.body.error.code, 'model_unpriced');
        assert.equal(refused.body.error.type, 'invalid_request_error');
        assert.match(refused.body.error.message, /"o1-pro"/);
        assert.match(refused.body.error.message, /catalog\.models\[\]\.pricing/);
        assert.match(refused.body.error.message, /allow_unpriced/);
      }
      assert.equal(refusals[0]!.body.error.param, 'model');
      assert.equal(refusals.filter((refused) => refused.body.error.code === 'model_unpriced').length, 3);
      assert.equal(upstreamCalls(fake), 0, 'no provider was called for a refused model');

      const snapshot = await post(gateway, key, '/v1/chat/completions', chat('gpt-4o-mini-2024-07-18'));
      assert.equal(snapshot.status, 200);
      const record = await loggedRecord(gateway, snapshot.requestId);
      assert.equal(typeof record.cost_usd, 'number');
      assert.ok(record.cost_usd > 0, 'the snapshot is priced and counted');
    });
  });

  test('allow_unpriced on the key (admin API), on the project (config), or no cost cap: served', async () => {
    await withGateway(
      async (gateway) => {
        const capped = await gateway.createKey({ monthlyCostUsd: 0.01 });
        assert.equal((await post(gateway, capped, '/v1/chat/completions', chat('o1-pro'))).status, 400);
        const listed = await gateway.admin('GET', '/admin/v1/keys');
        const id = (listed.body.data as { id: string; allow_unpriced: boolean }[])[0]!.id;
        assert.equal(listed.body.data[0].allow_unpriced, false);
        const changed = await gateway.admin('PATCH', `/admin/v1/keys/${id}`, { allow_unpriced: true });
        assert.equal(changed.status, 200);
        assert.equal(changed.body.allow_unpriced, true);
        assert.equal((await post(gateway, capped, '/v1/chat/completions', chat('o1-pro'))).status, 200);

        const created = await gateway.admin('POST', '/admin/v1/keys', { name: 'allowed', scopes: ['model:request'], limits: { monthly_cost_usd: 1 }, allow_unpriced: true });
        assert.equal(created.status, 201);
        assert.equal((await post(gateway, created.body.secret as string, '/v1/chat/completions', chat('o1-pro'))).status, 200);

        const inProject = await gateway.createKey({ monthlyCostUsd: 0.01, projectId: 'research' });
        const shown = await gateway.admin('GET', '/admin/v1/projects');
        const research = (shown.body.data as { id: string; allow_unpriced: boolean }[]).find((project) => project.id === 'research');
        assert.equal(research?.allow_unpriced, true);
        assert.equal((await post(gateway, inProject, '/v1/chat/completions', chat('o1-pro'))).status, 200);

        const uncapped = await gateway.createKey({ rpm: 100 });
        assert.equal((await post(gateway, uncapped, '/v1/chat/completions', chat('o1-pro'))).status, 200);
      },
      { projects: { research: { allowUnpriced: true } } },
    );
  });

  test('nor by a fallback: routing skips an unpriced fallback for a capped key, and takes it for one without a cap', async () => {
    await withGateway(
      async (gateway, fake) => {
        const capped = await gateway.createKey({ monthlyCostUsd: 0.01 });
        const uncapped = await gateway.createKey({ rpm: 100 });
        const models = () => fake.server.requests.filter((request) => request.method === 'POST').map((request) => (request.json as { model: string }).model);

        fake.failNext('/v1/chat/completions', 500, 'overloaded');
        const refused = await post(gateway, capped, '/v1/chat/completions', chat('gpt-4o-mini'));
        assert.equal(refused.status, 502, JSON.stringify(refused.body));
        assert.deepEqual(models(), ['gpt-4o-mini'], 'the unpriced fallback was not called');

        fake.failNext('/v1/chat/completions', 500, 'overloaded');
        const served = await post(gateway, uncapped, '/v1/chat/completions', chat('gpt-4o-mini'));
        assert.equal(served.status, 200, JSON.stringify(served.body));
        assert.deepEqual(models().slice(1), ['gpt-4o-mini', 'house-model']);
      },
      {
        catalog: { models: [{ id: 'house-model', provider: 'openai', upstreamId: 'house-model' }] },
        routing: [{ model: 'gpt-4o-mini', retries: 0, fallbacks: ['house-model'], fallbackOn: ['server_error'], cooldown: { failures: 100 } }],
      },
    );
  });
});
