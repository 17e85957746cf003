import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { PNG_1X1 } from './helpers/scripted-provider.js';

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/*
 * Agents end to end over HTTP: authoring through the admin API, runs through
 * POST /v1/agents/{slug}/runs, the real OpenAI adapter talking to the fake OpenAI upstream.
 */

const USAGE = { promptTokens: 7, completionTokens: 3 };
const JPEG = Buffer.concat([Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'), Buffer.alloc(64)]);
const pngUri = (bytes: Buffer = PNG_1X1) => `data:image/png;base64,${bytes.toString('base64')}`;

function chatGraph(name: string, config: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    name,
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'answer' },
      { id: 'answer', type: 'llm', config: { model: 'gpt-4o-mini', system: 'You are {{vars.persona}}.', ...config }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{answer.content}}' } },
    ],
    variables: { persona: 'helpful' },
  };
}

let fake: OpenAIFake;
let gateway: TestGateway;
let keyA: string;
let keyB: string;
let keyOther: string;
let keyNoScope: string;
const tap = new RecordTap();

async function call(method: string, path: string, key: string | null, body?: unknown, raw?: string): Promise<{ status: number; body: Loose; headers: Headers }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...(key !== null ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: Loose = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // binary or empty
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

const run = (slug: string, key: string, body: unknown) => call('POST', `/v1/agents/${slug}/runs`, key, body);
const reply = (text: string) => fake.scriptChat({ kind: 'reply', text, usage: USAGE });
const chatBodies = () => fake.server.requests.filter((request) => request.path.endsWith('/chat/completions')).map((request) => request.json as Loose);

async function publish(slug: string, graph: unknown, project?: string): Promise<void> {
  const saved = await gateway.admin('PUT', `/admin/v1/agents/${slug}`, { graph, ...(project !== undefined ? { project } : {}) });
  assert.equal(saved.status, 200, JSON.stringify(saved.body));
  const published = await gateway.admin('POST', `/admin/v1/agents/${slug}/publish`, {});
  assert.equal(published.status, 200, JSON.stringify(published.body));
}

before(async () => {
  fake = await startOpenAIFake();
  gateway = await startTestGateway({
    env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' },
    routes: [...ROUTE_MODULES, tap.routes],
  });
  keyA = await gateway.createKey({ scopes: ['agents:execute'] });
  keyB = await gateway.createKey({ scopes: ['agents:execute'] });
  keyOther = await gateway.createKey({ scopes: ['agents:execute'], projectId: 'other' });
  keyNoScope = await gateway.createKey({ scopes: ['model:request'] });
  await publish('helper', chatGraph('Helper'));
});
after(async () => {
  await gateway.close();
  await fake.close();
});
beforeEach(() => {
  fake.server.requests.length = 0;
  reply('Hello from the fake.');
});

describe('agent authoring through the admin API', () => {
  test('validate reports every problem; save refuses an invalid graph', async () => {
    const broken = { version: 1, name: 'b', entry: 'input', nodes: [{ id: 'input', type: 'input', next: 'x' }, { id: 'l', type: 'llm', config: {}, next: 'input' }] };
    const validated = await gateway.admin('POST', '/admin/v1/agents/validate', { graph: broken });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.valid, false);
    assert.deepEqual(
      validated.body.issues.map((issue: Loose) => `${issue.node}:${issue.field}`).sort(),
      ['input:next', 'l:config.model', 'l:id', 'null:nodes'].sort(),
    );
    const saved = await gateway.admin('PUT', '/admin/v1/agents/broken', { graph: broken });
    assert.equal(saved.status, 400);
    assert.equal(saved.body.error.code, 'invalid_agent_graph');
    assert.match(saved.body.error.message, /4 problem\(s\).*node "l" config.model: is required/);
    assert.equal((await gateway.admin('GET', '/admin/v1/agents/broken')).status, 404);
  });

  test('save → test → publish; re-publishing makes a new version and runs record which ran', async () => {
    let saved = await gateway.admin('PUT', '/admin/v1/agents/flow', { graph: chatGraph('Flow v1') });
    assert.equal(saved.status, 200);
    assert.equal(saved.body.draft_version, 1);
    assert.equal(saved.body.published_version, null);
    saved = await gateway.admin('PUT', '/admin/v1/agents/flow', { graph: chatGraph('Flow v2', { user: 'Draft two: {{input}}' }) });
    assert.equal(saved.body.draft_version, 2);

    const unpublished = await run('flow', keyA, { input: 'hi' });
    assert.equal(unpublished.status, 404);
    assert.equal(unpublished.body.error.code, 'agent_not_found');

    const tested = await gateway.admin('POST', '/admin/v1/agents/flow/test', { key: keyA, input: 'try it' });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.equal(tested.body.test, true);
    assert.deepEqual(tested.body.agent, { slug: 'flow', version: null, draft_version: 2 });
    assert.equal(chatBodies().at(-1).messages.at(-1).content, 'Draft two: try it');
    const testRecord = await tap.wait(tested.body.request_id);
    assert.equal(testRecord.extra?.test, true);
    assert.equal(testRecord.mode, 'agent');

    const badKey = await gateway.admin('POST', '/admin/v1/agents/flow/test', { key: 'sk-mg-nope', input: 'x' });
    assert.equal(badKey.status, 400);
    assert.equal(badKey.body.error.param, 'key');
    // A key without agents:execute gets the run API's own answer, not a body error.
    const noScope = await gateway.admin('POST', '/admin/v1/agents/flow/test', { key: keyNoScope, input: 'x' });
    assert.equal(noScope.status, 403, JSON.stringify(noScope.body));
    assert.equal(noScope.body.error.code, 'insufficient_scope');

    const first = await gateway.admin('POST', '/admin/v1/agents/flow/publish', { draft_version: 1 });
    assert.equal(first.status, 200);
    assert.equal(first.body.version, 1);
    const ranFirst = await run('flow', keyA, { input: 'hi' });
    assert.equal(ranFirst.status, 200);
    assert.deepEqual(ranFirst.body.agent, { slug: 'flow', version: 1, draft_version: 1 });
    assert.equal(chatBodies().at(-1).messages.at(-1).content, 'hi');

    const second = await gateway.admin('POST', '/admin/v1/agents/flow/publish', {});
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal(second.body.version, 2);
    assert.equal(second.body.draft_version, 2);
    const ranSecond = await run('flow', keyA, { input: 'hi' });
    assert.deepEqual(ranSecond.body.agent, { slug: 'flow', version: 2, draft_version: 2 });
    const record = await tap.wait(ranSecond.body.request_id);
    assert.equal(record.extra?.agent_version, 2);
    assert.equal(record.extra?.run_id, ranSecond.body.run_id);

    const shown = await gateway.admin('GET', '/admin/v1/agents/flow');
    assert.deepEqual(shown.body.versions.map((version: Loose) => [version.version, version.draft_version]), [[2, 2], [1, 1]]);
    const listed = await gateway.admin('GET', '/admin/v1/agents');
    assert.ok(listed.body.data.some((agent: Loose) => agent.slug === 'flow' && agent.published_version === 2));
  });
});

describe('agent runs', () => {
  test('the response of docs/agents.md', async () => {
    const response = await run('helper', keyA, { input: 'hello' });
    assert.equal(response.status, 200);
    const body = response.body;
    assert.equal(body.request_id, response.headers.get('x-request-id'));
    assert.match(body.run_id, /^run_[0-9a-f]{32}$/);
    assert.match(body.conversation_id, /^conv_[0-9a-f]{32}$/);
    assert.deepEqual(body.output, { text: 'Hello from the fake.', attachments: [] });
    assert.deepEqual(body.usage, {
      prompt_tokens: 7, completion_tokens: 3, total_tokens: 10,
      nodes: [{ node: 'answer', type: 'llm', model: 'gpt-4o-mini', prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, images: null }],
    });
    assert.equal(typeof body.cost.total_usd, 'number');
    assert.deepEqual(body.cost.nodes.map((node: Loose) => node.node), ['answer']);
    assert.deepEqual(body.input_assets, []);
    assert.deepEqual(chatBodies()[0].messages, [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: 'hello' }]);
  });

  test('every input form of the spec', async () => {
    const forms: [unknown, unknown][] = [
      [{ input: 'plain' }, 'plain'],
      [{ message: 'alias' }, 'alias'],
      [{ input: [{ type: 'input_text', text: 'one' }, { type: 'text', text: 'two' }] }, 'one\ntwo'],
      [{ input: [{ type: 'message', role: 'user', content: 'earlier' }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }, { role: 'user', content: [{ type: 'input_text', text: 'latest' }] }] }, 'latest'],
      [{ messages: [{ role: 'system', content: 'ignored' }, { role: 'user', content: 'from messages' }] }, 'from messages'],
    ];
    for (const [body, expected] of forms) {
      const response = await run('helper', keyA, body);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.deepEqual(chatBodies().at(-1).messages.at(-1).content, expected);
    }
  });

  test('the request schema is strict: no graph, model or overrides; exactly one input form', async () => {
    for (const [body, message] of [
      [{ input: 'x', model: 'gpt-4o' }, /body.model is not a recognised field/],
      [{ input: 'x', graph: {} }, /body.graph is not a recognised field/],
      [{ input: 'x', overrides: { temperature: 2 } }, /body.overrides is not a recognised field/],
      [{ input: 'x', message: 'y' }, /only one of input, message and messages/],
      [{}, /input, message or messages/],
      [{ input: '   ' }, /turn is empty/],
      [{ messages: [{ role: 'assistant', content: 'x' }] }, /no message with role "user"/],
    ] as [unknown, RegExp][]) {
      const response = await run('helper', keyA, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.error.code, 'invalid_body');
      assert.match(response.body.error.message, message);
    }
    assert.equal(chatBodies().length, 0);
  });

  test('access: project or grant, scope, unknown slug', async () => {
    const denied = await run('helper', keyOther, { input: 'x' });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'agent_access_denied');
    const keyRow = (await gateway.gateway.context.keys.store.list('other'))[0]!;
    assert.equal((await gateway.admin('POST', '/admin/v1/agents/helper/grants', { key_id: keyRow.id })).status, 201);
    assert.equal((await run('helper', keyOther, { input: 'x' })).status, 200);
    assert.equal((await gateway.admin('DELETE', `/admin/v1/agents/helper/grants/${keyRow.id}`)).status, 204);
    assert.equal((await run('helper', keyOther, { input: 'x' })).status, 403);

    const noScope = await run('helper', keyNoScope, { input: 'x' });
    assert.equal(noScope.status, 403);
    assert.equal(noScope.body.error.code, 'insufficient_scope');
    const unknown = await run('nope', keyA, { input: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'agent_not_found');
  });

  test('structured outputs steer a condition', async () => {
    await publish('judge', {
      version: 1, name: 'Judge', entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'check' },
        { id: 'check', type: 'llm', config: { model: 'gpt-4o-mini', outputs: [{ name: 'on_topic', type: 'boolean', description: 'is it about cooking' }] }, next: 'gate' },
        { id: 'gate', type: 'condition', config: { field: 'check.json.on_topic', op: 'truthy' }, branches: { true: 'yes', false: 'no' } },
        { id: 'yes', type: 'output', config: { text: 'Let us cook.' } },
        { id: 'no', type: 'output', config: { text: 'I only talk about cooking.' } },
      ],
    });
    reply('{"on_topic": false}');
    assert.equal((await run('judge', keyA, { input: 'cars?' })).body.output.text, 'I only talk about cooking.');
    assert.equal(chatBodies().at(-1).response_format.type, 'json_schema');
    assert.equal(chatBodies().at(-1).response_format.json_schema.strict, true);
    reply('{"on_topic": true}');
    assert.equal((await run('judge', keyA, { input: 'pasta?' })).body.output.text, 'Let us cook.');
  });

  test('an image node stores generated images as assets served by the gateway', async () => {
    await publish('painter', {
      version: 1, name: 'Painter', entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'paint' },
        { id: 'paint', type: 'image', config: { model: 'gpt-image-1', prompt: 'Paint {{input}}' }, next: 'out' },
        { id: 'out', type: 'output', config: { text: 'Here: {{paint.url}}', attachments: ['{{paint.url}}'] } },
      ],
    });
    const response = await run('painter', keyA, { input: 'a cat' });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const [attachment] = response.body.output.attachments;
    assert.equal(attachment.type, 'image');
    assert.equal(attachment.mime_type, 'image/png');
    assert.equal(attachment.url, `${gateway.url}/v1/agents/assets/${attachment.asset_id}`);
    assert.equal(response.body.output.text, `Here: ${attachment.url}`);
    // A Host header never names where assets are: a client that follows the URL sends its key there.
    const spoofed = await new Promise<Loose>((resolve, reject) => {
      const request = httpRequest(`${gateway.url}/v1/agents/painter/runs`, {
        method: 'POST',
        headers: { host: 'attacker.example', authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
      }, (answer) => {
        let text = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => (text += chunk));
        answer.on('end', () => resolve(JSON.parse(text)));
      });
      request.on('error', reject);
      request.end(JSON.stringify({ input: 'a dog' }));
    });
    assert.ok(spoofed.output.attachments[0].url.startsWith(`${gateway.url}/v1/agents/assets/`), JSON.stringify(spoofed));
    assert.equal(response.body.usage.nodes[0].images, 1);
    const image = await fetch(attachment.url, { headers: { authorization: `Bearer ${keyA}` } });
    assert.equal(image.status, 200);
    assert.equal(image.headers.get('content-type'), 'image/png');
    const record = await tap.wait(response.body.request_id);
    assert.deepEqual(record.media?.assetIds, [attachment.asset_id]);
  });

  test('an image to a model without image input is refused before any provider call', async () => {
    await publish('texty', { ...chatGraph('Texty'), nodes: [
      { id: 'input', type: 'input', next: 'answer' },
      { id: 'answer', type: 'llm', config: { model: 'o3-mini' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{answer.content}}' } },
    ] });
    const response = await run('texty', keyA, { input: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: pngUri() }] });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, 'unsupported_input_modality');
    assert.equal(fake.server.requests.length, 0);
  });
});

describe('agent media', () => {
  test('oversized, too many, mislabelled and credentialed images are refused', async () => {
    const cases: [unknown, number, string, RegExp][] = [
      [[{ type: 'input_image', image_url: pngUri(Buffer.concat([PNG_1X1, Buffer.alloc(8 * 1024 * 1024)])) }], 413, 'request_too_large', /8 MiB per image/],
      [[{ type: 'input_image', image_url: pngUri(JPEG) }], 400, 'invalid_image_url', /declared as image\/png but its content is an image\/jpeg/],
      [[{ type: 'input_image', image_url: `data:image/jpeg;base64,${Buffer.from('<svg></svg>').toString('base64')}` }], 400, 'invalid_image_url', /not an accepted image/],
      [[{ type: 'input_image', image_url: `data:image/svg+xml;base64,${Buffer.from('<svg></svg>').toString('base64')}` }], 400, 'invalid_image_url', /PNG, JPEG, WebP, GIF, HEIC and HEIF/],
      [[{ type: 'input_image', image_url: 'https://user:secret@images.example.com/a.png' }], 400, 'invalid_image_url', /must not contain a username or password/],
      [[{ type: 'image_url', image_url: { url: 'http://images.example.com/a.png' } }], 400, 'invalid_image_url', /https URL/],
    ];
    for (const [input, status, code, message] of cases) {
      const response = await run('helper', keyA, { input });
      assert.equal(response.status, status, JSON.stringify(response.body).slice(0, 300));
      assert.equal(response.body.error.code, code);
      assert.match(response.body.error.message, message);
    }
    const huge = JSON.stringify({ input: [{ type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(13 * 1024 * 1024)}` }] });
    const tooBig = await call('POST', '/v1/agents/helper/runs', keyA, undefined, huge);
    assert.equal(tooBig.status, 413);
    assert.match(tooBig.body.error.message, /12 MiB/);
    assert.equal(fake.server.requests.length, 0);
  });

  test('two turns: an image on turn one is archived and materialised for the model on turn two', async () => {
    const first = await run('helper', keyA, { input: [{ type: 'input_text', text: 'what is this?' }, { type: 'input_image', image_url: pngUri(), filename: 'dot.png' }, { type: 'input_image', image_url: 'https://images.example.com/b.png' }] });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const [inline, linked] = first.body.input_assets;
    assert.equal(inline.source, 'inline');
    assert.equal(inline.mime_type, 'image/png');
    assert.equal(inline.bytes, PNG_1X1.length);
    assert.match(inline.sha256, /^[0-9a-f]{64}$/);
    assert.equal(inline.url, `${gateway.url}/v1/agents/assets/${inline.asset_id}`);
    assert.deepEqual({ source: linked.source, url: linked.url, bytes: linked.bytes }, { source: 'url', url: 'https://images.example.com/b.png', bytes: null });

    const record = await tap.wait(first.body.request_id);
    assert.ok(!JSON.stringify(record.requestPayload).includes(PNG_1X1.toString('base64')), 'no base64 in the log');
    assert.ok(JSON.stringify(record.requestPayload).includes(`asset:${inline.asset_id}`));
    assert.deepEqual(record.media?.assetIds, [inline.asset_id, linked.asset_id]);

    const stored = await fetch(inline.url, { headers: { authorization: `Bearer ${keyA}` } });
    assert.deepEqual(Buffer.from(await stored.arrayBuffer()), PNG_1X1);
    assert.equal((await call('GET', `/v1/agents/assets/${inline.asset_id}`, keyB)).status, 404);

    fake.server.requests.length = 0;
    const second = await run('helper', keyA, { input: 'and now?', conversation_id: first.body.conversation_id });
    assert.equal(second.status, 200);
    assert.equal(second.body.conversation_id, first.body.conversation_id);
    const messages = chatBodies()[0].messages;
    assert.deepEqual(messages.map((message: Loose) => message.role), ['system', 'user', 'assistant', 'user']);
    assert.deepEqual(messages[1].content, [
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: pngUri() } },
      { type: 'image_url', image_url: { url: 'https://images.example.com/b.png' } },
    ]);
    assert.equal(messages[2].content, 'Hello from the fake.');
  });

  test('a conversation is bound to its key and agent: hijacks get agent_conversation_error', async () => {
    const first = await run('helper', keyA, { input: 'mine' });
    const conversation = first.body.conversation_id;
    for (const [slug, key] of [['helper', keyB], ['judge', keyA]] as const) {
      const hijack = await run(slug, key, { input: 'let me in', conversation_id: conversation });
      assert.equal(hijack.status, 404);
      assert.equal(hijack.body.error.code, 'agent_conversation_error');
    }
    const unknown = await run('helper', keyA, { input: 'x', conversation_id: 'conv_0000' });
    assert.equal(unknown.body.error.code, 'agent_conversation_error');
    const traversal = await run('helper', keyA, { input: 'x', conversation_id: '../../etc/passwd' });
    assert.equal(traversal.body.error.code, 'agent_conversation_error');
  });

  test('concurrent runs on one conversation never interleave: the second gets 409', async () => {
    const first = await run('helper', keyA, { input: 'start' });
    fake.server.requests.length = 0;
    fake.scriptChat({ kind: 'delay-headers', delayMs: 400 });
    const slow = run('helper', keyA, { input: 'slow', conversation_id: first.body.conversation_id });
    while (fake.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const second = await run('helper', keyA, { input: 'fast', conversation_id: first.body.conversation_id });
    assert.equal(second.status, 409);
    assert.equal(second.body.error.code, 'conflict');
    assert.equal((await slow).status, 200);
    reply('after');
    assert.equal((await run('helper', keyA, { input: 'again', conversation_id: first.body.conversation_id })).status, 200);
  });
});
