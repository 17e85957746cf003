/**
 * "This provider does not offer that capability" has one answer on every surface that calls a
 * model: 400 model_mode_mismatch naming the field that chose the model (docs/errors.md), never
 * a 502. The models below are declared for a provider that serves chat only.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { painterGraph } from './helpers/agents.js';

let gateway: TestGateway;
let key: string;

before(async () => {
  gateway = await startTestGateway({
    configFile: {
      catalog: {
        models: [
          { id: 'claude-embedder', provider: 'anthropic', mode: 'embedding', input_modalities: ['text'], output_modalities: ['embedding'] },
          { id: 'claude-painter', provider: 'anthropic', mode: 'image_generation', input_modalities: ['text'], output_modalities: ['image'] },
        ],
      },
    },
  });
  key = await gateway.createKey();
});
after(() => gateway.close());

async function post(path: string, body: unknown): Promise<{ status: number; error: { code: string; param: string | null } }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { error: { code: string; param: string | null } };
  return { status: response.status, error: answer.error };
}

test('embeddings and images: 400 model_mode_mismatch naming model', async () => {
  for (const [path, body] of [
    ['/v1/embeddings', { model: 'claude-embedder', input: 'Hi' }],
    ['/v1/images/generations', { model: 'claude-painter', prompt: 'a cat' }],
  ] as const) {
    const { status, error } = await post(path, body);
    assert.equal(status, 400, path);
    assert.deepEqual({ code: error.code, param: error.param }, { code: 'model_mode_mismatch', param: 'model' }, path);
  }
});

test("an agent's image node: the same 400, naming the node's field", async () => {
  assert.equal((await gateway.admin('PUT', '/admin/v1/agents/painter', { graph: painterGraph('claude-painter') })).status, 200);
  assert.equal((await gateway.admin('POST', '/admin/v1/agents/painter/publish', {})).status, 200);
  const { status, error } = await post('/v1/agents/painter/runs', { input: 'a cat' });
  assert.equal(status, 400);
  assert.deepEqual({ code: error.code, param: error.param }, { code: 'model_mode_mismatch', param: 'config.model' });
});
