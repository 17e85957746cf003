import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { adminCli } from './helpers/admin-cli.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';

/** `modelgate models …`, `modelgate routing …` and the health detail of `modelgate status`, as an operator runs them. */

describe('modelgate models, routing and status', { skip: CLI_NOT_BUILT }, () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('disables, prices, aliases and resets a model; the list says where each comes from', async () => {
    const disabled = await adminCli(gateway, 'models', 'disable', 'gpt-4.1-mini', '--note', 'retired');
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.match(disabled.stdout, /state\s+disabled/);
    assert.match(disabled.stdout, /note\s+retired/);
    const listed = await adminCli(gateway, 'models', 'list', '--all');
    assert.match(listed.stdout, /gpt-4\.1-mini\s+-\s+-\s+disabled\s+-\s+admin API/);
    assert.match(listed.stdout, /gpt-4o-mini\s+openai\s+chat\s+listed\s+.*shipped catalog/);
    const priced = await adminCli(gateway, 'models', 'set', 'gpt-4o', '--set', 'pricing.input_per_million=1.5', '--set', 'pricing.output_per_million=6', '--set', 'pricing.status=docs_inferred');
    assert.equal(priced.code, 0, priced.stderr);
    assert.match(priced.stdout, /price in\/out per 1M\s+1\.5 \/ 6 \(docs_inferred\)/);
    const bad = await adminCli(gateway, 'models', 'set', 'gpt-4o', '--set', 'context_window=big', '--set', 'mode=video');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /context_window/);
    assert.match(bad.stderr, /mode/);
    const aliased = await adminCli(gateway, 'models', 'alias', 'quick', 'gpt-4o-mini');
    assert.equal(aliased.code, 0, aliased.stderr);
    assert.match((await adminCli(gateway, 'models', 'aliases')).stdout, /quick\s+gpt-4o-mini\s+legacy\s+admin API/);
    assert.equal((await adminCli(gateway, 'models', 'enable', 'gpt-4.1-mini')).code, 0);
    assert.equal((await adminCli(gateway, 'models', 'reset', 'gpt-4.1-mini')).code, 0);
    assert.equal((await adminCli(gateway, 'models', 'reset', 'gpt-4.1-mini')).code, 1);
  });

  test('routing set names every problem; status shows the deployment and the last failure', async () => {
    const refused = await adminCli(gateway, 'routing', 'set', 'gpt-4o', '--set', 'deployments=[{"provider":"nope"}]', '--set', 'fallbacks=["no-such-model"]');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /deployments\[0\]\.provider/);
    assert.match(refused.stderr, /fallbacks\[0\]/);
    const routed = await adminCli(gateway, 'routing', 'set', 'gpt-4o', '--set', 'deployments=[{"provider":"openai","name":"primary"}]', '--set', 'cooldown.failures=1', '--set', 'cooldown.durationMs=600000');
    assert.equal(routed.code, 0, routed.stderr);
    assert.match((await adminCli(gateway, 'routing', 'list')).stdout, /gpt-4o\s+admin API\s+yes/);

    const key = await gateway.createKey();
    fake.failNext('/v1/chat/completions', 500, 'upstream broke');
    const failed = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }) });
    assert.equal(failed.status, 502);
    const requestId = failed.headers.get('x-request-id')!;
    await gateway.gateway.context.logs.writer.flush();
    const status = await adminCli(gateway, 'status');
    assert.match(status.stdout, /gpt-4o\s+primary\s+openai\s+1\s+COOLING DOWN/);
    assert.match(status.stdout, /openai\s+ok\s+1\s+1 \(100\.0%\)/);
    assert.match(status.stdout, new RegExp(`openai\\s+\\S+\\s+502\\s+provider_error\\s+gpt-4o\\s+${requestId}`));
  });
});
