import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NODE_TYPES } from '../src/agents/graph/types.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { PAINTER_GRAPH } from './helpers/agents.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/*
 * The admin routes the dashboard's graph editor adds to the authoring API: the node schema
 * (the validator's own description of each node type), one saved draft, and the per-step
 * trace of a test run.
 */

let fake: OpenAIFake;
let gateway: TestGateway;
let key: string;

const GRAPH = {
  version: 1,
  name: 'Router',
  entry: 'input',
  variables: { tone: 'kind' },
  nodes: [
    { id: 'input', type: 'input', next: 'check', x: 0, y: 0 },
    {
      id: 'check',
      type: 'llm',
      config: { model: 'gpt-4o-mini', system: 'Be {{vars.tone}}.', outputs: [{ name: 'on_topic', type: 'boolean' }] },
      next: 'route',
    },
    { id: 'route', type: 'condition', config: { field: 'check.json.on_topic', op: 'truthy' }, branches: { true: 'yes', false: 'no' } },
    { id: 'yes', type: 'output', config: { text: 'yes: {{input}}' } },
    { id: 'no', type: 'output', config: { text: 'no' } },
  ],
};

before(async () => {
  fake = await startOpenAIFake();
  gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
  key = await gateway.createKey({ scopes: ['agents:execute'] });
});
after(async () => {
  await gateway.close();
  await fake.close();
});

describe('graph editor admin routes', () => {
  test('the node schema lists every node type with the settings the validator accepts', async () => {
    const { status, body } = await gateway.admin('GET', '/admin/v1/agent-schema');
    assert.equal(status, 200);
    const types = body.node_types.map((entry: Loose) => entry.type);
    assert.deepEqual(types, NODE_TYPES.filter((type) => type !== 'subagent'));
    const loop = body.node_types.find((entry: Loose) => entry.type === 'loop');
    assert.deepEqual(loop.links, { kind: 'branches', handles: ['continue', 'done'] });
    assert.equal(loop.config.find((entry: Loose) => entry.name === 'count').maximum, 50, 'agents.maxLoopIterations, resolved');
    const llm = body.node_types.find((entry: Loose) => entry.type === 'llm');
    assert.deepEqual(llm.config.find((entry: Loose) => entry.name === 'model'), { name: 'model', label: 'Model', kind: 'model', required: true, description: 'a chat model of the catalog', mode: 'chat' });
    // Forms show labels in words, not config keys.
    const labelOf = (name: string) => llm.config.find((entry: Loose) => entry.name === name).label;
    assert.deepEqual([labelOf('includeHistory'), labelOf('maxTokens'), labelOf('system')], ['Include earlier turns', 'Max tokens', 'System prompt']);

    // Each listed setting passes the validator's known-key check; a setting not listed fails it.
    for (const nodeType of body.node_types) {
      const config = Object.fromEntries(nodeType.config.map((entry: Loose) => [entry.name, null]));
      const graph = { version: 1, name: 'n', entry: 'x', nodes: [{ id: 'x', type: nodeType.type, config: { ...config, bogus: 1 } }] };
      const { body: result } = await gateway.admin('POST', '/admin/v1/agents/validate', { graph });
      const unknown = result.issues.filter((issue: Loose) => /is not a known setting/.test(issue.message)).map((issue: Loose) => issue.field);
      assert.deepEqual(unknown, ['config.bogus'], nodeType.type);
    }
  });

  test('a node no path from the entry leads to is a problem, named on that node', async () => {
    const graph = {
      version: 1,
      name: 'orphan',
      entry: 'input',
      nodes: [
        { id: 'input', type: 'input', config: {}, next: 'out' },
        { id: 'stray', type: 'llm', config: { model: 'gpt-4o-mini' }, next: 'out' },
        { id: 'out', type: 'output', config: { text: '{{input}}' } },
      ],
    };
    const { status, body } = await gateway.admin('POST', '/admin/v1/agents/validate', { graph });
    assert.equal(status, 200);
    assert.equal(body.valid, false);
    assert.deepEqual(
      body.issues.map((issue: Loose) => [issue.node, issue.field]),
      [['stray', 'id']],
    );
    assert.match(body.issues[0].message, /no path from the entry "input" leads to this node/);
  });

  test('a saved draft can be read back by number; an unknown one is 404', async () => {
    await gateway.admin('PUT', '/admin/v1/agents/drafty', { graph: GRAPH });
    await gateway.admin('PUT', '/admin/v1/agents/drafty', { graph: { ...GRAPH, name: 'Router 2' } });
    const first = await gateway.admin('GET', '/admin/v1/agents/drafty/drafts/1');
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.graph, GRAPH, 'stored as authored, canvas positions included');
    assert.equal((await gateway.admin('GET', '/admin/v1/agents/drafty/drafts/2')).body.graph.name, 'Router 2');
    const missing = await gateway.admin('GET', '/admin/v1/agents/drafty/drafts/9');
    assert.equal(missing.status, 404);
    assert.match(missing.body.error.message, /has no draft 9/);
  });

  test("a test run answers each step's input, output, model, usage, cost and time; a published run does not", async () => {
    fake.scriptChat({ kind: 'reply', text: '{"on_topic": true}', usage: { promptTokens: 11, completionTokens: 5 } });
    await gateway.admin('PUT', '/admin/v1/agents/traced', { graph: GRAPH });
    const { status, body } = await gateway.admin('POST', '/admin/v1/agents/traced/test', { key, input: 'primes?' });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.output.text, 'yes: primes?');
    assert.deepEqual(
      body.trace.map((step: Loose) => [step.node, step.branch, step.model]),
      [['input', null, null], ['check', null, 'gpt-4o-mini'], ['route', 'true', null], ['yes', null, null]],
    );
    const [input, check, route, yes] = body.trace;
    assert.equal(input.input, 'primes?');
    assert.deepEqual(check.input, { system: 'Be kind.', user: 'primes?' });
    assert.deepEqual(check.output, { content: '{"on_topic": true}', json: { on_topic: true } });
    assert.deepEqual(check.usage, { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 });
    assert.equal(check.cost_usd, body.cost.nodes[0].cost_usd);
    assert.ok(check.cost_usd > 0);
    assert.equal(route.input, true);
    assert.deepEqual(yes.output, { content: 'yes: primes?' });
    for (const step of body.trace) assert.ok(Number.isInteger(step.duration_ms) && step.duration_ms >= 0);

    await gateway.admin('POST', '/admin/v1/agents/traced/publish', {});
    const response = await fetch(`${gateway.url}/v1/agents/traced/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'primes?' }),
    });
    const published = (await response.json()) as Loose;
    assert.equal(published.output.text, 'yes: primes?');
    assert.equal('trace' in published, false);
  });

  test("a test run's generated image can be fetched by an admin; an unknown asset is 404", async () => {
    await gateway.admin('PUT', '/admin/v1/agents/painter', { graph: PAINTER_GRAPH });
    const { status, body } = await gateway.admin('POST', '/admin/v1/agents/painter/test', { key, input: 'a cat' });
    assert.equal(status, 200, JSON.stringify(body));
    const [assetId] = body.trace[1].asset_ids;
    assert.equal(body.output.attachments[0].asset_id, assetId);
    const image = await fetch(`${gateway.url}/admin/v1/agent-assets/${assetId}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await image.arrayBuffer()).subarray(0, 4), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const missing = await gateway.admin('GET', '/admin/v1/agent-assets/asset_nope');
    assert.equal(missing.status, 404);
    assert.equal((await fetch(`${gateway.url}/admin/v1/agent-assets/${assetId}`)).status, 401, 'admins only');
  });

  test("a key's conversations with the published agent can be browsed, with the API's access rules", async () => {
    fake.scriptChat({ kind: 'reply', text: '{"on_topic": true}', usage: { promptTokens: 3, completionTokens: 2 } });
    const other = await gateway.createKey({ scopes: ['agents:execute'] });
    const stranger = await gateway.createKey({ scopes: ['agents:execute'], projectId: 'elsewhere' });
    const idOf = async (secret: string) => ((await gateway.gateway.context.keys.authenticator.authenticate({ authorization: `Bearer ${secret}` }, 'agents:execute')) as { keyId: string }).keyId;
    const run = async (secret: string, body: object) => {
      const response = await fetch(`${gateway.url}/v1/agents/traced/runs`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await response.json()) as Loose;
    };
    const mine = await run(key, { input: 'first' });
    await run(key, { input: 'second', conversation_id: mine.conversation_id });
    const theirs = await run(other, { input: 'theirs' });

    const keyId = await idOf(key);
    const list = await gateway.admin('GET', `/admin/v1/agents/traced/conversations?key_id=${keyId}`);
    assert.equal(list.status, 200);
    // The published runs of the key only: not the other key's, not the test conversation of the same key.
    assert.ok(list.body.data.some((entry: Loose) => entry.id === mine.conversation_id && entry.message_count === 4));
    assert.ok(list.body.data.every((entry: Loose) => entry.id !== theirs.conversation_id));
    const shown = await gateway.admin('GET', `/admin/v1/agents/traced/conversations/${mine.conversation_id}?key_id=${keyId}`);
    assert.deepEqual(shown.body.messages.map((message: Loose) => [message.role, message.text]), [
      ['user', 'first'],
      ['assistant', 'yes: first'],
      ['user', 'second'],
      ['assistant', 'yes: second'],
    ]);
    const foreign = await gateway.admin('GET', `/admin/v1/agents/traced/conversations/${theirs.conversation_id}?key_id=${keyId}`);
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'agent_conversation_error');
    const denied = await gateway.admin('GET', `/admin/v1/agents/traced/conversations?key_id=${await idOf(stranger)}`);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'agent_access_denied');
    assert.equal((await gateway.admin('GET', '/admin/v1/agents/traced/conversations')).status, 400, 'key_id is required');
  });

  test('a test run can name its key by id (the dashboard holds no secrets), with the same refusals', async () => {
    fake.scriptChat({ kind: 'reply', text: '{"on_topic": false}', usage: { promptTokens: 3, completionTokens: 2 } });
    const keyId = (await gateway.admin('GET', '/admin/v1/keys')).body.data[0].id;
    const { status, body } = await gateway.admin('POST', '/admin/v1/agents/traced/test', { key_id: keyId, input: 'weather?' });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.output.text, 'no');
    await gateway.gateway.context.logs.writer.flush();
    const log = await gateway.admin('GET', `/admin/v1/logs/${body.request_id}`);
    assert.equal(log.body.key_id, keyId, 'metered and logged under the key');

    const both = await gateway.admin('POST', '/admin/v1/agents/traced/test', { key, key_id: keyId, input: 'x' });
    assert.equal(both.status, 400);
    assert.match(both.body.error.message, /exactly one of key .* or key_id/);
    const unknown = await gateway.admin('POST', '/admin/v1/agents/traced/test', { key_id: 'key_nope', input: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal((await gateway.admin('POST', `/admin/v1/keys/${keyId}/pause`)).status, 200);
    const paused = await gateway.admin('POST', '/admin/v1/agents/traced/test', { key_id: keyId, input: 'x' });
    assert.equal(paused.status, 403);
    assert.equal(paused.body.error.code, 'key_paused');
  });
});
