import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validateGraph, describeIssues } from '../src/agents/graph/validate.js';
import type { CompiledGraph } from '../src/agents/graph/types.js';
import { executeGraph, RunProgress } from '../src/agents/runtime/execute.js';
import type { HistoryMessage, RunLimits, RuntimeDependencies, Turn } from '../src/agents/runtime/types.js';
import { ProviderRegistry } from '../src/providers/index.js';
import { heldTo, InMemoryLimiter, type Limiter } from '../src/limits/index.js';
import type { Principal } from '../src/keys/index.js';
import { ModelCalls } from '../src/calls/index.js';
import { GatewayError } from '../src/errors/index.js';
import { toSafeValue, valueBytes } from '../src/agents/values.js';
import { agentTestCatalog, graphEnvironment } from './helpers/agents.js';
import { MemoryMedia, PNG_1X1, RecordingHttp, ScriptedProvider, type ChatScript } from './helpers/scripted-provider.js';

const LIMITS: RunLimits = { maxNodeExecutions: 200, maxLoopIterations: 50, maxModelCalls: 25, maxValueBytes: 1024 * 1024, runTimeoutMs: 60_000 };

function compile(graph: unknown, allowlist: string[] = []): CompiledGraph {
  const result = validateGraph(graph, graphEnvironment({ allowlist }));
  if (!result.ok) throw new Error(describeIssues(result.issues));
  return result.graph;
}

interface Harness {
  provider: ScriptedProvider;
  media: MemoryMedia;
  http: RecordingHttp;
  dependencies: RuntimeDependencies;
}

const ANONYMOUS: Principal = { kind: 'anonymous', fingerprint: 'anonymous' };

/** A key with caps (no per-minute limit), as a run's meter sees it. */
function keyWithCaps(limits: { dailyTokens?: number; monthlyCostUsd?: number }): Principal {
  return {
    kind: 'key', keyId: 'key_capped', projectId: 'default', fingerprint: 'key_capped…test', scopes: new Set(['agents:execute']), allowedModels: null,
    limits: { rpm: null, dailyTokens: limits.dailyTokens ?? null, monthlyCostUsd: limits.monthlyCostUsd ?? null },
  };
}

/** Whose caps a harness's runs count against, and the limiter that keeps them. */
interface Meter {
  limiter: Limiter;
  principal: Principal;
}

function harness(script?: ChatScript, options: { limits?: Partial<RunLimits>; acceptsRemoteImageUrls?: boolean; http?: RecordingHttp; meter?: Meter } = {}): Harness {
  const provider = new ScriptedProvider(script, { acceptsRemoteImageUrls: options.acceptsRemoteImageUrls ?? true });
  const media = new MemoryMedia();
  const http = options.http ?? new RecordingHttp();
  const catalog = agentTestCatalog();
  return {
    provider,
    media,
    http,
    dependencies: {
      catalog,
      call: new ModelCalls(catalog, new ProviderRegistry([provider]), options.meter?.limiter ?? new InMemoryLimiter()).begin({ requestId: 'req_test', endpoint: '/v1/agents/test/runs', platform: null, startedAt: Date.now() }),
      principal: options.meter?.principal ?? ANONYMOUS,
      limits: { ...LIMITS, ...options.limits },
      media,
      http,
      requestId: 'req_test',
    },
  };
}

const text = (value: string): Turn => ({ text: value, images: [] });
const lastUserContent = (call: { body: Record<string, unknown> }) => (call.body.messages as { role: string; content: unknown }[]).at(-1)!.content;

function rejectsWith(code: string, message?: RegExp) {
  return (error: unknown) => error instanceof GatewayError && error.code === code && (message === undefined || message.test(error.message));
}

describe('agent runtime', () => {
  test('every node type in one run', async () => {
    const graph = compile({
      version: 1, name: 'all', entry: 'input', variables: { topic: 'cats' },
      nodes: [
        { id: 'input', type: 'input', next: 'lookup' },
        { id: 'lookup', type: 'http', config: { url: 'https://api.example.com/search?q={{input}}', method: 'POST', body: { q: '{{input}}', topic: '{{vars.topic}}' } }, next: 'shape' },
        { id: 'shape', type: 'transform', config: { output: { found: '{{lookup.json.result}}', status: '{{lookup.status}}' } }, next: 'loop' },
        { id: 'loop', type: 'loop', config: { count: 2, var: 'i' }, branches: { continue: 'think', done: 'draw' } },
        { id: 'think', type: 'llm', config: { model: 'text-chat', system: 'Topic {{vars.topic}}', user: 'Round {{vars.i}}: {{shape.json.found}}' }, next: 'loop' },
        { id: 'draw', type: 'image', config: { model: 'image-gen', prompt: 'Draw {{think.content}}', size: '256x256' }, next: 'check' },
        { id: 'check', type: 'condition', config: { expr: 'vars.i == 2 && shape.json.status == 200' }, branches: { true: 'out', false: 'bad' } },
        { id: 'out', type: 'output', config: { text: 'Said {{think.content}} after {{loop.json.index}} rounds', attachments: ['{{draw.url}}'] } },
        { id: 'bad', type: 'output', config: { text: 'wrong branch' } },
      ],
    }, ['api.example.com']);
    const h = harness((_call, index) => `answer ${index}`);
    const result = await executeGraph(graph, text('hello world'), [], h.dependencies);

    assert.equal(result.text, 'Said answer 1 after 2 rounds');
    assert.deepEqual(h.http.requests, [{ method: 'POST', url: 'https://api.example.com/search?q=hello%20world', body: '{"q":"hello world","topic":"cats"}' }]);
    assert.equal(h.provider.chatCalls.length, 2);
    assert.deepEqual(h.provider.chatCalls[1]!.body.messages, [{ role: 'system', content: 'Topic cats' }, { role: 'user', content: 'Round 1: found' }]);
    assert.equal(h.provider.imageCalls[0]!.body.prompt, 'Draw answer 1');
    assert.equal(h.provider.imageCalls[0]!.body.size, '256x256');
    assert.equal(result.attachments.length, 1);
    assert.match(result.attachments[0]!.url, /^https:\/\/gateway\.test\/v1\/assets\/asset_draw_/);
    assert.deepEqual(result.nodes.map((node) => [node.node, node.type, node.model]), [['think', 'llm', 'text-chat'], ['think', 'llm', 'text-chat'], ['draw', 'image', 'image-gen']]);
    assert.equal(result.nodes[0]!.costMicroUsd, null, 'text-chat has no pricing');
    assert.equal(result.nodes[2]!.costMicroUsd, 40_000, 'one image at $0.04');
    assert.deepEqual(result.trace.map((step) => step.branch ?? step.node), ['input', 'lookup', 'shape', 'continue', 'think', 'continue', 'think', 'done', 'draw', 'true', 'out']);
  });

  test('structured outputs are requested as a strict JSON schema and steer a condition', async () => {
    const graph = compile({
      version: 1, name: 's', entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'judge' },
        { id: 'judge', type: 'llm', config: { model: 'vision-chat', outputs: [{ name: 'passed', type: 'boolean', description: 'did it pass' }, { name: 'score', type: 'integer' }] }, next: 'gate' },
        { id: 'gate', type: 'condition', config: { field: 'judge.json.passed', op: '==', value: true }, branches: { true: 'yes', false: 'no' } },
        { id: 'yes', type: 'output', config: { text: 'passed with {{judge.json.score}}' } },
        { id: 'no', type: 'output', config: { text: 'failed with {{judge.json.score}}' } },
      ],
    });
    const failing = harness(() => '{"passed": false, "score": 3, "__proto__": {"polluted": true}}');
    assert.equal((await executeGraph(graph, text('x'), [], failing.dependencies)).text, 'failed with 3');
    assert.deepEqual(failing.provider.chatCalls[0]!.body.response_format, {
      type: 'json_schema',
      json_schema: {
        name: 'judge_outputs',
        strict: true,
        schema: { type: 'object', properties: { passed: { type: 'boolean', description: 'did it pass' }, score: { type: 'integer' } }, required: ['passed', 'score'], additionalProperties: false },
      },
    });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);

    const passing = harness(() => '```json\n{"passed": true, "score": 9}\n```');
    assert.equal((await executeGraph(graph, text('x'), [], passing.dependencies)).text, 'passed with 9');

    const broken = harness(() => 'I think it passed');
    await assert.rejects(executeGraph(graph, text('x'), [], broken.dependencies), rejectsWith('provider_error', /did not return the structured output/));
    const wrongType = harness(() => '{"passed": "yes", "score": 1}');
    await assert.rejects(executeGraph(graph, text('x'), [], wrongType.dependencies), rejectsWith('provider_error', /passed is not a boolean/));
  });

  test('a while loop stops at its iteration budget with a clear error', async () => {
    const graph = compile({
      version: 1, name: 'l', entry: 'input', variables: { go: true },
      nodes: [
        { id: 'input', type: 'input', next: 'again' },
        { id: 'again', type: 'loop', config: { while: 'vars.go', var: 'n' }, branches: { continue: 'again', done: 'out' } },
        { id: 'out', type: 'output', config: { text: 'never' } },
      ],
    });
    const h = harness(undefined, { limits: { maxLoopIterations: 5 } });
    const progress = new RunProgress();
    await assert.rejects(executeGraph(graph, text('x'), [], h.dependencies, progress), rejectsWith('invalid_agent_graph', /loop "again" exceeded its limit of 5 \(agents.maxLoopIterations\)/));
    assert.equal(progress.trace.filter((step) => step.branch === 'continue').length, 5);
  });

  test('node-execution, model-call and value budgets', async () => {
    const looping = {
      version: 1, name: 'b', entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'loop' },
        { id: 'loop', type: 'loop', config: { count: 10 }, branches: { continue: 'talk', done: 'out' } },
        { id: 'talk', type: 'llm', config: { model: 'vision-chat' }, next: 'loop' },
        { id: 'out', type: 'output', config: { text: '{{talk.content}}' } },
      ],
    };
    const graph = compile(looping);
    const calls = harness(undefined, { limits: { maxModelCalls: 3 } });
    await assert.rejects(executeGraph(graph, text('x'), [], calls.dependencies), rejectsWith('invalid_agent_graph', /maxModelCalls/));
    assert.equal(calls.provider.chatCalls.length, 3);

    const nodes = harness(undefined, { limits: { maxNodeExecutions: 6 } });
    await assert.rejects(executeGraph(graph, text('x'), [], nodes.dependencies), rejectsWith('invalid_agent_graph', /maxNodeExecutions/));

    const values = harness(() => 'y'.repeat(2000), { limits: { maxValueBytes: 1000 } });
    await assert.rejects(executeGraph(graph, text('x'), [], values.dependencies), rejectsWith('invalid_agent_graph', /node "talk" exceeded .*maxValueBytes/));
  });

  test('templates and transforms that repeat a large value stop at maxValueBytes before building it', async () => {
    // 600 copies of a 1 MB answer would be a string past V8's limit (a RangeError, a 500); the
    // budget stops each at its first megabyte instead.
    const big = () => 'y'.repeat(1000 * 1000);
    const repeated = (last: Record<string, unknown>) => compile({ version: 1, name: 'r', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'vision-chat' }, next: last.id },
      last,
      ...(last.type === 'output' ? [] : [{ id: 'out', type: 'output', config: { text: 'never' } }]),
    ] });
    const cases: [string, Record<string, unknown>][] = [
      ['an output text', { id: 'last', type: 'output', config: { text: '{{talk.content}}'.repeat(600) } }],
      ['an llm system prompt', { id: 'last', type: 'llm', config: { model: 'vision-chat', system: '{{talk.content}}'.repeat(600) }, next: 'out' }],
      ['a transform object', { id: 'last', type: 'transform', config: { output: Object.fromEntries(Array.from({ length: 600 }, (_, index) => [`k${index}`, '{{talk.content}}'])) }, next: 'out' }],
    ];
    for (const [name, last] of cases) {
      const h = harness(big);
      await assert.rejects(executeGraph(repeated(last), text('x'), [], h.dependencies), rejectsWith('invalid_agent_graph', /node "last" exceeded .*agents\.maxValueBytes/), name);
      assert.equal(h.provider.chatCalls.length, 1, name);
    }
    const http = harness(big);
    const graph = compile({ version: 1, name: 'h', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'vision-chat' }, next: 'call' },
      { id: 'call', type: 'http', config: { url: 'https://api.example.com/x', method: 'POST', body: { a: ['{{talk.content}}', '{{talk.content}}'] } }, next: 'out' },
      { id: 'out', type: 'output', config: { text: 'never' } },
    ] }, ['api.example.com']);
    await assert.rejects(executeGraph(graph, text('x'), [], http.dependencies), rejectsWith('invalid_agent_graph', /node "call" exceeded/));
    assert.equal(http.http.requests.length, 0);
  });

  test('the value budget counts a value as its JSON text', () => {
    const value = toSafeValue({ a: ['x', 1, true, null, { 'é"': 'ü\n' }], b: {}, c: [] });
    assert.equal(valueBytes(value), Buffer.byteLength(JSON.stringify(value)));
    assert.ok(valueBytes(value, 10) > 10);
  });

  test('a caller\'s lone surrogate in an http URL placeholder is sent as U+FFFD, not a 500', async () => {
    const graph = compile({ version: 1, name: 'u', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'call' },
      { id: 'call', type: 'http', config: { url: 'https://api.example.com/s?q={{input}}' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{call.status}}' } },
    ] }, ['api.example.com']);
    const h = harness();
    const result = await executeGraph(graph, text('a\ud800b \ud83d\ude00'), [], h.dependencies);
    assert.equal(result.text, '200');
    assert.equal(h.http.requests[0]!.url, 'https://api.example.com/s?q=a%EF%BF%BDb%20%F0%9F%98%80');
  });

  test('the run deadline aborts the model call through its signal', async () => {
    let seenSignal: AbortSignal | undefined;
    const h = harness((call) => {
      seenSignal = call.signal;
      return new Promise((_resolve, reject) => call.signal.addEventListener('abort', () => reject(new GatewayError('provider_timeout', 'aborted'))));
    }, { limits: { runTimeoutMs: 20 } });
    const graph = compile({ version: 1, name: 't', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'vision-chat' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{talk.content}}' } },
    ] });
    // AbortSignal.timeout does not hold the event loop open (a server's socket does); this timer does, for the test.
    const keepAlive = setTimeout(() => undefined, 10_000);
    try {
      await assert.rejects(executeGraph(graph, text('x'), [], h.dependencies), rejectsWith('provider_timeout', /agents.runTimeoutMs/));
    } finally {
      clearTimeout(keepAlive);
    }
    assert.equal(seenSignal?.aborted, true);
  });

  test('user input and model output are never rendered as templates again', async () => {
    const graph = compile({ version: 1, name: 'i', entry: 'input', variables: { secret: 'S3CRET' }, nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'vision-chat', user: 'User said: {{input}}' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{talk.content}} / {{input}}' } },
    ] });
    const h = harness(() => '{{vars.secret}}');
    const result = await executeGraph(graph, text('{{vars.secret}} {{talk.content}}'), [], h.dependencies);
    assert.equal(lastUserContent(h.provider.chatCalls[0]!), 'User said: {{vars.secret}} {{talk.content}}');
    assert.equal(result.text, '{{vars.secret}} / {{vars.secret}} {{talk.content}}');
  });

  test('conditions over model JSON cannot reach prototypes or string methods', async () => {
    const graph = compile({ version: 1, name: 'p', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'vision-chat', outputs: [{ name: 'answer', type: 'string' }] }, next: 'gate' },
      { id: 'gate', type: 'condition', config: { expr: 'talk.json.answer.length == null && talk.content.length == null' }, branches: { true: 'out', false: 'out' } },
      { id: 'out', type: 'output', config: { text: '{{gate.content}} {{talk.json.answer}}' } },
    ] });
    const result = await executeGraph(graph, text('x'), [], harness(() => '{"answer": "constructor", "toString": 1}').dependencies);
    assert.equal(result.text, 'true constructor');
  });

  test('current-turn images reach image-capable models; text-only models refuse before any call', async () => {
    const image = { kind: 'inline' as const, assetId: 'asset_1', mimeType: 'image/png', data: PNG_1X1 };
    const turn: Turn = { text: 'what is this', images: [image, { kind: 'url', assetId: 'asset_2', url: 'https://img.example.com/a.png' }] };
    const graphFor = (model: string, config: Record<string, unknown> = {}) => compile({ version: 1, name: 'm', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'look' },
      { id: 'look', type: 'llm', config: { model, ...config }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{look.content}}' } },
    ] });
    const h = harness(undefined, { acceptsRemoteImageUrls: false });
    await executeGraph(graphFor('vision-chat'), turn, [], h.dependencies);
    assert.deepEqual(lastUserContent(h.provider.chatCalls[0]!), [
      { type: 'text', text: 'what is this' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1.toString('base64')}` } },
      { type: 'text', text: '[image omitted: this model cannot be given image URLs]' },
    ]);

    const refused = harness();
    await assert.rejects(executeGraph(graphFor('text-chat'), turn, [], refused.dependencies), rejectsWith('unsupported_input_modality', /step "look" uses the model "text-chat"/));
    assert.equal(refused.provider.chatCalls.length, 0);

    const custom = harness();
    await executeGraph(graphFor('text-chat', { user: 'Describe: {{input}}', includeInputMedia: false }), turn, [], custom.dependencies);
    assert.equal(lastUserContent(custom.provider.chatCalls[0]!), 'Describe: what is this');
  });

  test('prior media are materialised up to 8 MiB per request, else labelled', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 1);
    const h = harness();
    h.media.stored.set('asset_old', { kind: 'inline', mimeType: 'image/png', data: big });
    h.media.stored.set('asset_new', { kind: 'inline', mimeType: 'image/jpeg', data: big });
    const history: HistoryMessage[] = [
      { role: 'user', text: 'first', assetIds: ['asset_old', 'asset_gone'] },
      { role: 'assistant', text: 'ok 1', assetIds: [] },
      { role: 'user', text: 'second', assetIds: ['asset_new'] },
      { role: 'assistant', text: 'ok 2', assetIds: [] },
    ];
    const graphFor = (model: string) => compile({ version: 1, name: 'h', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{talk.content}}' } },
    ] });
    await executeGraph(graphFor('vision-chat'), text('third'), history, h.dependencies);
    const messages = h.provider.chatCalls[0]!.body.messages as { role: string; content: unknown }[];
    assert.deepEqual(messages.map((message) => message.role), ['user', 'assistant', 'user', 'assistant', 'user']);
    assert.deepEqual(messages[0]!.content, [
      { type: 'text', text: 'first' },
      { type: 'text', text: '[image omitted: it would exceed the 8 MiB allowed for earlier images in one request]' },
      { type: 'text', text: '[image omitted: the stored image is no longer available]' },
    ]);
    assert.deepEqual(messages[2]!.content, [{ type: 'text', text: 'second' }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${big.toString('base64')}` } }]);

    const textOnly = harness();
    textOnly.media.stored.set('asset_new', { kind: 'inline', mimeType: 'image/png', data: PNG_1X1 });
    await executeGraph(graphFor('text-chat'), text('third'), history.slice(2), textOnly.dependencies);
    assert.deepEqual((textOnly.provider.chatCalls[0]!.body.messages as { content: unknown }[])[0]!.content, [
      { type: 'text', text: 'second' },
      { type: 'text', text: '[image omitted: this model does not accept images]' },
    ]);
  });

  test('includeHistory false leaves earlier turns out', async () => {
    const h = harness();
    const graph = compile({ version: 1, name: 'n', entry: 'input', nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'vision-chat', includeHistory: false }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{talk.content}}' } },
    ] });
    await executeGraph(graph, text('now'), [{ role: 'user', text: 'before', assetIds: [] }], h.dependencies);
    assert.deepEqual(h.provider.chatCalls[0]!.body.messages, [{ role: 'user', content: 'now' }]);
  });
});

describe('agent runtime: model calls against the key caps', () => {
  const threeCalls = () =>
    compile({
      version: 1, name: 'three calls', entry: 'input',
      nodes: [
        { id: 'input', type: 'input', next: 'a' },
        { id: 'a', type: 'llm', config: { model: 'vision-chat' }, next: 'b' },
        { id: 'b', type: 'llm', config: { model: 'vision-chat' }, next: 'c' },
        { id: 'c', type: 'llm', config: { model: 'vision-chat' }, next: 'out' },
        { id: 'out', type: 'output', config: { text: '{{c.content}}' } },
      ],
    });

  test('each call reserves before it is made: a run stops at the call that no longer fits the daily cap', async () => {
    // Each call reserves its prompt plus the default reply budget (1,024) and settles at 1,500.
    const h = harness(undefined, { meter: { limiter: new InMemoryLimiter(), principal: keyWithCaps({ dailyTokens: 3000 }) } });
    h.provider.usage = { promptTokens: 100, completionTokens: 1400, totalTokens: 1500, cachedPromptTokens: null };
    const progress = new RunProgress();
    await assert.rejects(executeGraph(threeCalls(), text('hello'), [], h.dependencies, progress), rejectsWith('daily_token_cap_exceeded'));
    assert.equal(h.provider.chatCalls.length, 2);
    assert.deepEqual(progress.nodes.map((node) => node.usage?.totalTokens), [1500, 1500]);
  });

  test('concurrent runs admit only the calls that fit the monthly cost cap, and settle them at their cost', async () => {
    const limiter = new InMemoryLimiter();
    // vision-chat costs $1 / $2 per million: a call reserves ≈ $0.00205 (1,024 reply tokens at $2).
    const principal = keyWithCaps({ monthlyCostUsd: 0.005 });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const h = harness(async () => {
      await held;
      return 'ok';
    }, { meter: { limiter, principal } });
    const graph = compile({
      version: 1, name: 'one call', entry: 'input',
      nodes: [{ id: 'input', type: 'input', next: 'a' }, { id: 'a', type: 'llm', config: { model: 'vision-chat' }, next: 'out' }, { id: 'out', type: 'output', config: { text: '{{a.content}}' } }],
    });
    let refused = 0;
    const runs = Array.from({ length: 5 }, () =>
      executeGraph(graph, text('hello'), [], h.dependencies).then(
        () => 'ok',
        (error: unknown) => {
          refused += 1;
          return (error as GatewayError).code;
        },
      ),
    );
    // The provider holds every call it got until each run was either admitted (called it) or refused.
    while (h.provider.chatCalls.length + refused < 5) await new Promise((resolve) => setImmediate(resolve));
    // Two reserve their estimate, the third the $0.0009 left; nothing is left for the other two.
    assert.equal(h.provider.chatCalls.length, 3);
    release();
    assert.deepEqual((await Promise.all(runs)).sort(), ['monthly_cost_cap_exceeded', 'monthly_cost_cap_exceeded', 'ok', 'ok', 'ok']);
    // Settled at the real cost (15 tokens ≈ $0.00002 each), the cap has room again.
    const after = await limiter.admit(heldTo(principal, 'caps'), { tokens: 0, costUsd: 0.0049 });
    await after.settle({ tokens: 0, costUsd: 0 });
  });

  test('a call the provider refused gives its reservation back; an image node reserves its images', async () => {
    const limiter = new InMemoryLimiter();
    const principal = keyWithCaps({ dailyTokens: 1100, monthlyCostUsd: 0.05 });
    const failing = harness(() => {
      throw new GatewayError('provider_error', 'The model provider failed. Try again later.');
    }, { meter: { limiter, principal } });
    const oneCall = compile({
      version: 1, name: 'one call', entry: 'input',
      nodes: [{ id: 'input', type: 'input', next: 'a' }, { id: 'a', type: 'llm', config: { model: 'vision-chat' }, next: 'out' }, { id: 'out', type: 'output', config: { text: '{{a.content}}' } }],
    });
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await assert.rejects(executeGraph(oneCall, text('hello'), [], failing.dependencies), rejectsWith('provider_error'));
    }
    // image-gen costs $0.04 an image: the $0.05 cap admits one draw at its price, a second with
    // the $0.01 left, and no third.
    const images = harness(undefined, { meter: { limiter, principal } });
    const draw = compile({
      version: 1, name: 'draw', entry: 'input',
      nodes: [{ id: 'input', type: 'input', next: 'img' }, { id: 'img', type: 'image', config: { model: 'image-gen', prompt: 'a cat', n: 1 }, next: 'out' }, { id: 'out', type: 'output', config: { text: '{{img.url}}' } }],
    });
    await executeGraph(draw, text('draw'), [], images.dependencies);
    await executeGraph(draw, text('draw'), [], images.dependencies);
    await assert.rejects(executeGraph(draw, text('draw'), [], images.dependencies), rejectsWith('monthly_cost_cap_exceeded'));
    assert.equal(images.provider.imageCalls.length, 2);
  });
});

