import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startOpenAIFake } from './fakes/openai.js';
import { spyOnEstimates } from './helpers/estimates.js';
import { startTestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';

/** Each call of this agent asks for up to 2,000 tokens: more than one reservation of the old fixed 1,024 per run. */
const TWO_CALLS = {
  version: 1, name: 'Two calls', entry: 'input',
  nodes: [
    { id: 'input', type: 'input', next: 'draft' },
    { id: 'draft', type: 'llm', config: { model: 'gpt-4o-mini', maxTokens: 2000 }, next: 'polish' },
    { id: 'polish', type: 'llm', config: { model: 'gpt-4o-mini', maxTokens: 2000, user: 'Polish: {{draft.content}}' }, next: 'out' },
    { id: 'out', type: 'output', config: { text: '{{polish.content}}' } },
  ],
};

test('agent runs over HTTP: a run counts once, and its model calls are held to the daily cap call by call', async () => {
  const fake = await startOpenAIFake();
  const tap = new RecordTap();
  const gateway = await startTestGateway({
    env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' },
    routes: [...ROUTE_MODULES, tap.routes],
  });
  try {
    // Every call the fake answers uses 9 tokens (5 + 4).
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 5, completionTokens: 4 } });
    const saved = await gateway.admin('PUT', '/admin/v1/agents/two-calls', { graph: TWO_CALLS });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal((await gateway.admin('POST', '/admin/v1/agents/two-calls/publish', {})).status, 200);
    const estimates = spyOnEstimates(gateway);
    const run = async (key: string) => {
      const response = await fetch(`${gateway.url}/v1/agents/two-calls/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: 'hi' }),
      });
      const body = (await response.json()) as { error: { code: string } };
      await tap.wait(response.headers.get('x-request-id')!);
      return { status: response.status, headers: response.headers, body };
    };

    // An uncapped run shows what each call reserves: the run itself reserves nothing.
    assert.equal((await run(await gateway.createKey({ scopes: ['agents:execute'] }))).status, 200);
    assert.equal(estimates[0]!.tokens, 0);
    const perCall = Math.max(estimates[1]!.tokens, estimates[2]!.tokens);
    assert.ok(perCall > 2000);

    // Room for one run's usage (18) and one more call's (9): far less than one call's estimate,
    // which each call reserves clamped to what is left of the cap.
    const key = await gateway.createKey({ scopes: ['agents:execute'], dailyTokens: 27 });
    const first = await run(key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    // Counted once (18 tokens), the second run's first call is admitted with the 9 tokens left
    // and uses them; its second call finds nothing left.
    fake.server.requests.length = 0;
    const second = await run(key);
    assert.equal(second.status, 429, JSON.stringify(second.body));
    assert.equal(second.body.error.code, 'daily_token_cap_exceeded');
    assert.ok(Number(second.headers.get('retry-after')) > 0);
    assert.equal(fake.server.requests.filter((request) => request.path === '/v1/chat/completions').length, 1);
    // Nothing is left of the cap: the next run is refused before it starts, with no provider call.
    fake.server.requests.length = 0;
    const third = await run(key);
    assert.equal(third.status, 429, JSON.stringify(third.body));
    assert.equal(third.body.error.code, 'daily_token_cap_exceeded');
    assert.equal(fake.server.requests.length, 0);
  } finally {
    await gateway.close();
    await fake.close();
  }
});
