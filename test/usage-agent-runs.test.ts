import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleGraph } from './helpers/agents.js';
import { startOpenAIFake } from './fakes/openai.js';
import { startTestGateway } from './helpers/gateway.js';

/**
 * An agent run through the gateway counts under its agent in usage by agent, and its one
 * node's model call under that model in usage by model (the run's record lists even one call).
 */
test("an agent run's usage: under the agent, and under the model its node called", async () => {
  const fake = await startOpenAIFake();
  const gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
  try {
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 5, completionTokens: 4 } });
    assert.equal((await gateway.admin('PUT', '/admin/v1/agents/tutor', { graph: simpleGraph({}, 'gpt-4o-mini') })).status, 200);
    assert.equal((await gateway.admin('POST', '/admin/v1/agents/tutor/publish', {})).status, 200);
    const key = await gateway.createKey({ scopes: ['agents:execute'] });
    const response = await fetch(`${gateway.url}/v1/agents/tutor/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hi' }),
    });
    assert.equal(response.status, 200, await response.text());
    await gateway.gateway.context.logs.writer.flush();

    const byAgent = await gateway.admin('GET', '/admin/v1/usage?by=agent');
    assert.deepEqual(byAgent.body.data.map((row: { agent: string; requests: number; total_tokens: number }) => [row.agent, row.requests, row.total_tokens]), [['tutor', 1, 9]]);
    const byModel = await gateway.admin('GET', '/admin/v1/usage?by=model');
    assert.deepEqual(byModel.body.data.map((row: { model: string; requests: number; total_tokens: number }) => [row.model, row.requests, row.total_tokens]), [['gpt-4o-mini', 1, 9]]);
  } finally {
    await gateway.close();
    await fake.close();
  }
});
