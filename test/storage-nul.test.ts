import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

const NUL_MESSAGE = /holds the character U\+0000, which the gateway cannot store or look up/;

function graph(name: string): Record<string, unknown> {
  return {
    version: 1,
    name,
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'answer' },
      { id: 'answer', type: 'llm', config: { model: 'gpt-4o-mini' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{answer.content}}' } },
    ],
  };
}

// PostgreSQL's text cannot hold U+0000: a caller's value with it used to reach the database
// and come back as a 500. SQLite stores it.
for (const backend of STORAGE_BACKENDS) {
  describe(`U+0000 in what a caller sends, on ${backend.name}: never a 500`, { skip: backend.skip }, () => {
    let fake: OpenAIFake;
    let shared: SharedStorage;
    let gateway: TestGateway;
    let key: string;

    before(async () => {
      fake = await startOpenAIFake();
      shared = await backend.create();
      gateway = await startTestGateway({ dataDir: shared.dataDir, env: { ...shared.env, OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream' } });
      key = await gateway.createKey();
      assert.equal((await gateway.admin('PUT', '/admin/v1/agents/helper', { graph: graph('Helper') })).status, 200);
      assert.equal((await gateway.admin('POST', '/admin/v1/agents/helper/publish', {})).status, 200);
    });
    after(async () => {
      await gateway.close();
      await shared.dispose();
      await fake.close();
    });

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
