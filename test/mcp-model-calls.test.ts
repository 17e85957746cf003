import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { anthropicId, FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { chatTurnView, geminiTurnView, messagesTurnView, type TurnView } from './fakes/agent-turns.js';
import { candidateResponse, FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startTestMcpServer, type TestMcpServer } from './helpers/mcp-servers.js';
import type { Scope } from '../src/keys/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response items and records are read loosely; each test asserts what it reads
type Loose = any;

/**
 * The Responses `mcp` tool over a gateway server, for a model of each vendor: every fake
 * decides its answer from the request, in its own wire format. A prompt `use:<tool>` asks for
 * that tool with {"text": "echoed-hello"}; once the conversation holds a tool result, the
 * model answers `ANSWER <results>`.
 */
type Decision = { kind: 'text'; text: string } | { kind: 'tool-call'; name: string; arguments: Record<string, unknown> };

/** The tool names each vendor was last offered. */
const offered = new Map<string, string[]>();
/** Run when the model asks for a tool (a server that goes down mid-loop). */
const beforeToolCall = new Map<string, () => void>();

function decide(vendor: string, view: TurnView): Decision {
  offered.set(vendor, view.tools.map((tool) => tool.name));
  const wanted = /use:([a-z0-9_]+)/.exec(view.userText)?.[1];
  if (wanted === undefined) return { kind: 'text', text: 'OK' };
  if (view.toolResults.length > 0) return { kind: 'text', text: `ANSWER ${view.toolResults}` };
  beforeToolCall.get(wanted)?.();
  return { kind: 'tool-call', name: wanted, arguments: { text: 'echoed-hello' } };
}

let callCount = 0;
const usage = { promptTokens: 30, completionTokens: 6 };

let openai: OpenAIFake;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let files: TestMcpServer;
let flaky: TestMcpServer;
let wobbly: TestMcpServer;
let gateway: TestGateway;

const VENDORS = [
  { name: 'OpenAI', model: 'gpt-4o-mini' },
  { name: 'Anthropic', model: 'claude-sonnet-4-5' },
  { name: 'Gemini', model: 'gemini-2.5-flash' },
];

before(async () => {
  openai = await startOpenAIFake();
  openai.scriptChat({
    kind: 'per-request',
    script(request) {
      const decision = decide('OpenAI', chatTurnView(request.json));
      if (decision.kind === 'text') return { kind: 'reply', text: decision.text, usage };
      callCount += 1;
      return { kind: 'tool-call', id: `call_mcp${callCount}`, name: decision.name, arguments: JSON.stringify(decision.arguments), usage };
    },
  });
  anthropic = await startFakeAnthropic();
  anthropic.reply({
    respond(request) {
      const decision = decide('Anthropic', messagesTurnView(request.json));
      if (decision.kind === 'text') return { message: { content: [{ type: 'text', text: decision.text }] } };
      return { message: { content: [{ type: 'tool_use', id: anthropicId('toolu'), name: decision.name, input: decision.arguments }], stop_reason: 'tool_use' } };
    },
  });
  gemini = await startFakeGemini();
  gemini.reply('chat', {
    respond(request) {
      const decision = decide('Gemini', geminiTurnView(request.json));
      const part = decision.kind === 'text' ? { text: decision.text } : { functionCall: { name: decision.name, args: decision.arguments } };
      return { response: candidateResponse([part], { usage: { promptTokens: 19, completionTokens: 7 } }) };
    },
  });
  files = await startTestMcpServer();
  flaky = await startTestMcpServer({ tools: ['echo'] });
  wobbly = await startTestMcpServer({ tools: ['echo'] });
  gateway = await startTestGateway({
    env: {
      OPENAI_BASE_URL: `${openai.server.url}/v1`,
      OPENAI_API_KEY: 'sk-test-fake-openai-0123456789',
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
      GEMINI_BASE_URL: gemini.url,
      GEMINI_API_KEY: FAKE_GEMINI_KEY,
    },
    configFile: {
      mcp: {
        allowAddresses: ['127.0.0.1/32'],
        servers: [
          { name: 'files', url: files.url, timeoutMs: 5000 },
          { name: 'flaky', url: flaky.url, timeoutMs: 1000 },
          { name: 'wobbly', url: wobbly.url, timeoutMs: 1000 },
          // Nothing listens there.
          { name: 'gone', url: 'http://127.0.0.1:9/mcp', timeoutMs: 1000 },
        ],
      },
    },
  });
});

after(async () => {
  await gateway.close();
  await Promise.all([openai.close(), anthropic.close(), gemini.close(), files.stop(), flaky.stop(), wobbly.stop()]);
});

const client = async (key: { scopes?: Scope[]; allowedTools?: string[] } = {}) =>
  new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ scopes: key.scopes ?? ['model:request', 'mcp:use'], allowedTools: key.allowedTools ?? null }), maxRetries: 0 });

const filesTool = { type: 'mcp' as const, server_label: 'files', require_approval: 'never' as const };

for (const vendor of VENDORS) {
  test(`${vendor.name}: the gateway runs the mcp tool's loop and answers with mcp_list_tools, mcp_call and the model's answer`, async () => {
    const before = files.calls.length;
    const upstreamResponses = openai.server.requests.filter((request) => request.path.endsWith('/responses')).length;
    const { data: response, response: raw } = await (await client()).responses.create({ model: vendor.model, input: 'Please use:files__echo', tools: [filesTool] }).withResponse();
    const output = response.output as Loose[];
    assert.deepEqual(output.map((item) => item.type), ['mcp_list_tools', 'mcp_call', 'message']);
    assert.equal(output[0].server_label, 'files');
    assert.ok(output[0].tools.some((tool: Loose) => tool.name === 'echo' && tool.input_schema.type === 'object'));
    assert.deepEqual({ ...output[1], id: undefined }, {
      id: undefined,
      type: 'mcp_call',
      status: 'completed',
      server_label: 'files',
      name: 'echo',
      arguments: JSON.stringify({ text: 'echoed-hello' }),
      output: 'echoed-hello',
      error: null,
      approval_request_id: null,
    });
    assert.match(response.output_text, /^ANSWER .*echoed-hello/);
    assert.deepEqual(files.calls.slice(before), [{ name: 'echo', arguments: { text: 'echoed-hello' } }]);
    // The model was offered the server's tools as functions, by their gateway names.
    assert.ok(offered.get(vendor.name)!.includes('files__echo'));
    // An OpenAI model too is called by the gateway, never handed the mcp tool to run itself.
    assert.equal(openai.server.requests.filter((request) => request.path.endsWith('/responses')).length, upstreamResponses);
    assert.ok(!openai.server.requests.some((request) => JSON.stringify(request.json ?? {}).includes('"type":"mcp"')));

    const record = await loggedRecord(gateway, raw.headers.get('x-request-id')!);
    assert.equal(record.status, 200);
    const calls = record.detail.calls as Loose[];
    assert.deepEqual(calls.map((call) => [call.purpose, call.purpose === 'tool' ? call.model : 'model', call.outcome]), [
      [null, 'model', 'ok'],
      ['tool', 'files__echo', 'ok'],
      [null, 'model', 'ok'],
    ]);
    assert.equal(calls[1].provider, 'files');
    // Both rounds are counted, in the record and in the answer.
    assert.equal(record.usage.prompt_tokens, calls[0].usage.promptTokens + calls[2].usage.promptTokens);
    assert.equal(response.usage?.input_tokens, record.usage.prompt_tokens);
  });
}

test('streamed: the API\'s own mcp events, in an order the SDK stream helper accepts', async () => {
  const stream = (await client()).responses.stream({ model: 'claude-sonnet-4-5', input: 'use:files__echo', tools: [filesTool] });
  const types: string[] = [];
  for await (const event of stream) types.push(event.type);
  const final = await stream.finalResponse();
  assert.deepEqual((final.output as Loose[]).map((item) => item.type), ['mcp_list_tools', 'mcp_call', 'message']);
  assert.match(final.output_text, /ANSWER .*echoed-hello/);
  for (const type of ['response.mcp_list_tools.in_progress', 'response.mcp_list_tools.completed', 'response.mcp_call.in_progress', 'response.mcp_call_arguments.done', 'response.mcp_call.completed']) {
    assert.ok(types.includes(type), type);
  }
  assert.equal(types[0], 'response.created');
  assert.equal(types.at(-1), 'response.completed');
  assert.ok(types.indexOf('response.mcp_call.completed') < types.indexOf('response.output_text.delta'));
});

test('a conversation continued after a tool loop sends the earlier calls back to the model as its own', async () => {
  const openaiClient = await client();
  const first = await openaiClient.responses.create({ model: 'gemini-2.5-flash', input: 'use:files__echo', tools: [filesTool] });
  const second = await openaiClient.responses.create({ model: 'gemini-2.5-flash', input: 'use:files__echo again', previous_response_id: first.id, tools: [filesTool] });
  // The earlier result is in the conversation: the model answers without a new call.
  assert.deepEqual((second.output as Loose[]).map((item) => item.type), ['mcp_list_tools', 'message']);
});

test('allow-lists: a tool outside the key\'s list is never offered nor called, and allowed_tools narrows further', async () => {
  const narrowKey = await client({ allowedTools: ['files__echo'] });
  const before = files.calls.length;
  const response = await narrowKey.responses.create({ model: 'gpt-4o-mini', input: 'use:files__template', tools: [filesTool] });
  const output = response.output as Loose[];
  assert.deepEqual(output[0].tools.map((tool: Loose) => tool.name), ['echo']);
  assert.deepEqual(offered.get('OpenAI'), ['files__echo']);
  // The model asked for it anyway: it is told there is no such tool; the server never hears of it.
  const call = output.find((item) => item.type === 'mcp_call');
  assert.equal(call.status, 'failed');
  assert.match(call.error, /no tool "files__template"/);
  assert.equal(files.calls.slice(before).length, 0);

  await (await client()).responses.create({ model: 'gpt-4o-mini', input: 'hello', tools: [{ ...filesTool, allowed_tools: ['read'] }] });
  assert.deepEqual(offered.get('OpenAI'), ['files__read']);
});

test('an unknown server_label and one outside the key\'s list get the same 404, naming the tool; the model is not called', async () => {
  const received = openai.server.requests.length;
  const unknown = await (await client()).responses.create({ model: 'gpt-4o-mini', input: 'hi', tools: [{ ...filesTool, server_label: 'nowhere' }] }).catch((error: unknown) => error);
  const hidden = await (await client({ allowedTools: ['flaky__*'] })).responses.create({ model: 'gpt-4o-mini', input: 'hi', tools: [filesTool] }).catch((error: unknown) => error);
  for (const [error, label] of [[unknown, 'nowhere'], [hidden, 'files']] as const) {
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 404);
    assert.equal((error.error as Loose).code, 'tool_not_found');
    assert.equal((error.error as Loose).param, 'tools[0].server_label');
    assert.match(error.message, new RegExp(`"${label}"`));
  }
  assert.equal(openai.server.requests.length, received);
});

test('a key without mcp:use is refused with 403 insufficient_scope', async () => {
  const error = await (await client({ scopes: ['model:request'] })).responses.create({ model: 'gpt-4o-mini', input: 'hi', tools: [filesTool] }).catch((caught: unknown) => caught);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, 403);
  assert.equal((error.error as Loose).code, 'insufficient_scope');
});

test('an unreachable server stops the request before any model call, naming it', async () => {
  const received = anthropic.requests.length;
  const error = await (await client()).responses.create({ model: 'claude-sonnet-4-5', input: 'use:gone__echo', tools: [{ type: 'mcp', server_label: 'gone', require_approval: 'never' }, filesTool] }).catch((caught: unknown) => caught);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, 502);
  assert.equal((error.error as Loose).code, 'mcp_server_unavailable');
  assert.match(error.message, /gone/);
  assert.equal(anthropic.requests.length, received, 'the model was never called with fewer tools');
});

test('a server that goes down mid-loop fails the request naming it; its round is in the record', async () => {
  beforeToolCall.set('flaky__echo', () => flaky.hang());
  const { response: raw } = await (await client()).responses
    .create({ model: 'gemini-2.5-flash', input: 'use:flaky__echo', tools: [{ type: 'mcp', server_label: 'flaky' }] })
    .withResponse()
    .catch((caught: Loose) => {
      assert.ok(caught instanceof OpenAI.APIError);
      assert.equal(caught.status, 502);
      assert.equal((caught.error as Loose).code, 'mcp_server_unavailable');
      assert.match(caught.message, /"flaky"/);
      return { response: { headers: caught.headers as Headers } };
    });
  const record = await loggedRecord(gateway, raw.headers.get('x-request-id')!);
  assert.equal(record.error_code, 'mcp_server_unavailable');
  assert.deepEqual((record.detail.calls as Loose[]).map((call) => [call.purpose ?? 'model', call.outcome]), [
    ['model', 'ok'],
    ['tool', 'mcp_server_unavailable'],
  ]);
});

test('streamed, a server that goes down after the stream opened ends it with response.failed naming it', async () => {
  beforeToolCall.set('wobbly__echo', () => wobbly.hang());
  const stream = await (await client()).responses.create({ model: 'claude-sonnet-4-5', input: 'use:wobbly__echo', tools: [{ type: 'mcp', server_label: 'wobbly' }], stream: true });
  const events: Loose[] = [];
  for await (const event of stream) events.push(event);
  assert.equal(events[0].type, 'response.created');
  assert.ok(events.some((event) => event.type === 'response.mcp_list_tools.completed'));
  const last = events.at(-1);
  assert.equal(last.type, 'response.failed');
  assert.equal(last.response.status, 'failed');
  assert.equal(last.response.error.code, 'mcp_server_unavailable');
  assert.match(last.response.error.message, /"wobbly"/);
});

test('require_approval "always" is refused: the gateway has no approval round', async () => {
  const error = await (await client()).responses.create({ model: 'gpt-4o-mini', input: 'hi', tools: [{ ...filesTool, require_approval: 'always' }] }).catch((caught: unknown) => caught);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, 400);
  assert.equal((error.error as Loose).param, 'tools[0].require_approval');
});

/** input → an llm node with the gateway's tools → output. */
const toolAgent = (tools: unknown, model = 'claude-sonnet-4-5') => ({
  version: 1,
  name: 'Tool user',
  entry: 'input',
  nodes: [
    { id: 'input', type: 'input', next: 'talk' },
    { id: 'talk', type: 'llm', config: { model, tools }, next: 'out' },
    { id: 'out', type: 'output', config: { text: '{{talk.content}}' } },
  ],
});

async function runAgent(slug: string, key: string, input: string): Promise<{ status: number; body: Loose }> {
  const response = await fetch(`${gateway.url}/v1/agents/${slug}/runs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ input }) });
  return { status: response.status, body: await response.json() };
}

test('agents: an llm node with tools runs the same loop; its rounds and tool calls are in the run\'s one record', async () => {
  assert.equal((await gateway.admin('PUT', '/admin/v1/agents/tool-user', { graph: toolAgent(['files__echo']) })).status, 200);
  assert.equal((await gateway.admin('POST', '/admin/v1/agents/tool-user/publish', {})).status, 200);
  const before = files.calls.length;
  const run = await runAgent('tool-user', await gateway.createKey({ scopes: ['agents:execute'] }), 'use:files__echo');
  assert.equal(run.status, 200);
  assert.match(run.body.output.text, /^ANSWER .*echoed-hello/);
  assert.deepEqual(offered.get('Anthropic'), ['files__echo']);
  assert.deepEqual(files.calls.slice(before), [{ name: 'echo', arguments: { text: 'echoed-hello' } }]);
  // One usage entry for the node: the sum of its rounds.
  assert.equal(run.body.usage.nodes.length, 1);
  assert.equal(run.body.usage.nodes[0].prompt_tokens, run.body.usage.prompt_tokens);
  const record = await loggedRecord(gateway, run.body.request_id);
  assert.deepEqual((record.detail.calls as Loose[]).map((call) => [call.purpose, call.model]), [
    ['node:talk', 'claude-sonnet-4-5'],
    ['tool', 'files__echo'],
    ['node:talk', 'claude-sonnet-4-5'],
  ]);
});

test('agents: a tool outside the caller\'s allow-list fails the node naming it, before any model call', async () => {
  assert.equal((await gateway.admin('PUT', '/admin/v1/agents/tool-narrow', { graph: toolAgent(['files__echo', 'files__read']) })).status, 200);
  assert.equal((await gateway.admin('POST', '/admin/v1/agents/tool-narrow/publish', {})).status, 200);
  const received = anthropic.requests.length;
  const run = await runAgent('tool-narrow', await gateway.createKey({ scopes: ['agents:execute'], allowedTools: ['files__echo'] }), 'use:files__read');
  assert.equal(run.status, 404);
  assert.equal(run.body.error.code, 'tool_not_found');
  assert.match(run.body.error.message, /files__read/);
  assert.doesNotMatch(run.body.error.message, /files__echo/);
  assert.equal(anthropic.requests.length, received);
});

test('agents: the editor\'s schema offers llm tools; a graph naming something else is refused at config.tools', async () => {
  const schema = await gateway.admin('GET', '/admin/v1/agent-schema');
  const llm = schema.body.node_types.find((node: Loose) => node.type === 'llm');
  assert.deepEqual(llm.config.find((field: Loose) => field.name === 'tools')?.kind, 'tools');
  assert.equal(schema.body.version, 1);
  const refused = await gateway.admin('PUT', '/admin/v1/agents/tool-bad', { graph: toolAgent(['files', 'files__*']) });
  assert.equal(refused.status, 400);
  assert.match(JSON.stringify(refused.body), /config\.tools/);
});
