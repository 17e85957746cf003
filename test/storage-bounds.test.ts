import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from './helpers/gateway.js';
import { simpleGraph } from './helpers/agents.js';
import { startBackendGateway, STORAGE_BACKENDS, type BackendGateway } from './helpers/storage-backends.js';

const NUL_MESSAGE = /holds the character U\+0000, which the gateway cannot store or look up/;

function graph(name: string): Record<string, unknown> {
  return simpleGraph({ name }, 'gpt-4o-mini');
}

// PostgreSQL's text cannot hold U+0000, and its integer and real columns have a range: a
// caller's value beyond them used to reach the database and come back as a 500.
for (const backend of STORAGE_BACKENDS) {
  describe(`what a caller sends that a database cannot hold, on ${backend.name}: never a 500`, { skip: backend.skip }, () => {
    let running: BackendGateway;
    let gateway: TestGateway;
    let key: string;

    before(async () => {
      running = await startBackendGateway(backend);
      gateway = running.gateway;
      key = await gateway.createKey();
      assert.equal((await gateway.admin('PUT', '/admin/v1/agents/helper', { graph: graph('Helper') })).status, 200);
      assert.equal((await gateway.admin('POST', '/admin/v1/agents/helper/publish', {})).status, 200);
    });
    after(() => running.close());

    test('names the gateway stores: a 400 that says what to remove on PostgreSQL, stored as sent on SQLite', async () => {
      const created = await gateway.admin('POST', '/admin/v1/keys', { name: 'a\u0000b', scopes: ['model:request'] });
      const agent = await gateway.admin('PUT', '/admin/v1/agents/nul-name', { graph: graph('N\u0000ame') });
      const lookup = await gateway.admin('GET', '/admin/v1/keys/key%00');
      if (backend.name === 'PostgreSQL') {
        for (const answer of [created, agent, lookup]) {
          assert.equal(answer.status, 400);
          assert.equal(answer.body.error.code, 'invalid_body');
          assert.match(answer.body.error.message, NUL_MESSAGE);
        }
      } else {
        assert.equal(created.status, 201);
        assert.equal(created.body.name, 'a\u0000b');
        assert.equal(agent.status, 200);
        assert.equal(lookup.status, 404);
      }
    });

    test('key limits: the largest and smallest each database holds are kept, beyond them a 400 naming the field', async () => {
      const largest = { rpm: 2_147_483_647, daily_tokens: Number.MAX_SAFE_INTEGER, monthly_cost_usd: 1_000_000_000 };
      const created = await gateway.admin('POST', '/admin/v1/keys', { name: 'bounds', scopes: ['model:request'], limits: largest });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual((await gateway.admin('GET', `/admin/v1/keys/${created.body.id}`)).body.limits, largest);
      const smallest = await gateway.admin('PATCH', `/admin/v1/keys/${created.body.id}`, { limits: { monthly_cost_usd: 0.000001 } });
      assert.equal(smallest.status, 200, JSON.stringify(smallest.body));
      for (const [field, value] of [['rpm', 2_147_483_648], ['daily_tokens', 1e19], ['monthly_cost_usd', 1e300], ['monthly_cost_usd', 1e-300]] as const) {
        const refused = await gateway.admin('POST', '/admin/v1/keys', { name: 'x', scopes: ['model:request'], limits: { [field]: value } });
        assert.equal(refused.status, 400, `${field} ${value}`);
        assert.equal(refused.body.error.param, `limits.${field}`);
      }
    });

    test('a number beyond what a column holds, in a lookup no schema bounds: a 400, not a 500', async () => {
      // 1e20 is out of an integer's range (SQLSTATE 22003); 1e308 goes as text an integer cannot read (22P02).
      for (const draftVersion of [1e20, 1e308]) {
        const published = await gateway.admin('POST', '/admin/v1/agents/helper/publish', { draft_version: draftVersion });
        if (backend.name === 'PostgreSQL') {
          assert.equal(published.status, 400, JSON.stringify(published.body));
          assert.match(published.body.error.message, /larger \(or closer to zero\) than the gateway can store/);
        } else {
          // SQLite compares the number and finds no such draft.
          assert.equal(published.status, 404, JSON.stringify(published.body));
        }
      }
    });

    test("a conversation_id that no run made is the spec's unknown-conversation answer, without a lookup", async () => {
      const response = await fetch(`${gateway.url}/v1/agents/helper/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'Hi', conversation_id: 'conv_\u0000' }),
      });
      const body = (await response.json()) as { error: { code: string } };
      assert.equal(response.status, 404);
      assert.equal(body.error.code, 'agent_conversation_error');
    });
  });
}
