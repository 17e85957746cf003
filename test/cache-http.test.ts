import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';

/*
 * The response cache over the chat-completions API with the official OpenAI SDK as the client:
 * hits and misses, JSON and streams, the caller's controls, what a policy leaves out, the
 * namespaces, the request record and usage.
 */

const POLICY = { name: 'class-answers', apply: { projects: ['class-101', 'class-102'] }, ttlSeconds: 600 };
const QUESTION = [{ role: 'user' as const, content: 'What is the capital of France?' }];

describe('response cache: chat completions', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let client: OpenAI;
  let otherProject: OpenAI;
  let uncached: OpenAI;
  let question = 0;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cache-test' },
      configFile: { cache: [POLICY] },
    });
    await gateway.gateway.context.keys.projects.create('class-101');
    await gateway.gateway.context.keys.projects.create('class-102');
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId: 'class-101' }), maxRetries: 0 });
    otherProject = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId: 'class-102' }), maxRetries: 0 });
    uncached = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey(), maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.server.close();
  });
  beforeEach(() => {
    fake.scriptChat({ kind: 'reply', text: 'Paris.', usage: { promptTokens: 12, completionTokens: 2 } });
    question += 1;
  });

  /** A question no earlier test asked (the cache outlives each test). */
  const messages = () => [{ role: 'user' as const, content: `${QUESTION[0]!.content} (#${question})` }];
  const upstreamCalls = () => fake.chatRequests().length;

  async function ask(sdk: OpenAI, body: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}, headers: Record<string, string> = {}) {
    const { data, response } = await sdk.chat.completions
      .create({ model: 'gpt-4o-mini', temperature: 0, messages: messages(), ...body }, { headers })
      .withResponse();
    return { data, cache: response.headers.get('x-modelgate-cache'), requestId: response.headers.get('x-request-id')!, response };
  }

  test('the same question at temperature 0 is answered once by the provider, then from the cache', async () => {
    const before = upstreamCalls();
    const first = await ask(client);
    const second = await ask(client);
    assert.equal(first.cache, 'miss');
    assert.equal(second.cache, 'hit');
    assert.equal(upstreamCalls() - before, 1);
    assert.equal(second.data.choices[0]!.message.content, 'Paris.');
    assert.deepEqual(second.data.choices, first.data.choices);
    assert.equal(second.data.model, 'gpt-4o-mini');
    assert.equal(second.response.headers.get('x-modelgate-attempts'), '0');

    const record = await loggedRecord(gateway, second.requestId);
    assert.equal(record.cache, 'hit');
    assert.equal(record.cost_usd, 0);
    assert.equal(record.usage, null);
    assert.equal(record.detail.cache.hit, true);
    assert.equal(record.detail.cache.source_request_id, first.requestId);
    const original = await loggedRecord(gateway, first.requestId);
    assert.equal(original.cache, 'miss');
    assert.ok(original.cost_usd > 0);
    assert.equal(record.detail.cache.saved_usd, original.cost_usd);
  });

  test('a stream is answered from the cache as a stream, frame for frame through the SDK', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Paris is the capital.', usage: { promptTokens: 12, completionTokens: 5 } });
    const before = upstreamCalls();
    const params = { model: 'gpt-4o-mini', temperature: 0, messages: messages(), stream_options: { include_usage: true } };
    const live = client.chat.completions.stream(params);
    const liveFinal = await live.finalChatCompletion();
    const replayed = client.chat.completions.stream(params);
    const deltas: string[] = [];
    replayed.on('content', (delta) => deltas.push(delta));
    const replayedFinal = await replayed.finalChatCompletion();
    assert.equal(upstreamCalls() - before, 1);
    assert.equal(replayedFinal.choices[0]!.message.content, 'Paris is the capital.');
    assert.equal(deltas.join(''), 'Paris is the capital.');
    assert.deepEqual(replayedFinal.usage, liveFinal.usage);

    const { data: stream, response } = await client.chat.completions.create({ ...params, stream: true }).withResponse();
    assert.equal(response.headers.get('x-modelgate-cache'), 'hit');
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'Paris is the capital.');
    assert.equal(chunks.at(-1)!.usage?.completion_tokens, 5);
    assert.equal(upstreamCalls() - before, 1);
  });

  test('a JSON answer and a stream of the same question are kept apart', async () => {
    const before = upstreamCalls();
    await ask(client);
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: messages(), stream: true });
    for await (const _chunk of stream) void _chunk;
    assert.equal(upstreamCalls() - before, 2);
  });

  test('a request above temperature 0, or without one, is answered by the provider each time (bypass)', async () => {
    const before = upstreamCalls();
    assert.equal((await ask(client, { temperature: 0.7 })).cache, 'bypass');
    assert.equal((await ask(client, { temperature: 0.7 })).cache, 'bypass');
    const { temperature: _unset, ...withoutTemperature } = { temperature: 0, model: 'gpt-4o-mini', messages: messages() };
    const { response } = await client.chat.completions.create(withoutTemperature).withResponse();
    assert.equal(response.headers.get('x-modelgate-cache'), 'bypass');
    assert.equal(upstreamCalls() - before, 3);
  });

  test('x-modelgate-cache: bypass and Cache-Control: no-store leave the cache out; refresh and no-cache answer anew and keep it', async () => {
    const before = upstreamCalls();
    await ask(client);
    assert.equal((await ask(client, {}, { 'x-modelgate-cache': 'bypass' })).cache, 'bypass');
    assert.equal((await ask(client, {}, { 'cache-control': 'no-store' })).cache, 'bypass');
    assert.equal(upstreamCalls() - before, 3);
    fake.scriptChat({ kind: 'reply', text: 'Paris, France.', usage: { promptTokens: 12, completionTokens: 3 } });
    assert.equal((await ask(client, {}, { 'x-modelgate-cache': 'refresh' })).cache, 'miss');
    const hit = await ask(client);
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.data.choices[0]!.message.content, 'Paris, France.');
    assert.equal((await ask(client, {}, { 'cache-control': 'no-cache' })).cache, 'miss');
    assert.equal(upstreamCalls() - before, 5);
  });

  test('x-modelgate-cache-ttl keeps an answer for less than the policy says', async () => {
    const before = upstreamCalls();
    await ask(client, {}, { 'x-modelgate-cache-ttl': '3' });
    assert.equal((await ask(client)).cache, 'hit');
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    assert.equal((await ask(client)).cache, 'miss');
    assert.equal(upstreamCalls() - before, 2);
  });

  test('an unknown x-modelgate-cache value or a bad TTL is a 400 naming the header', async () => {
    await assert.rejects(ask(client, {}, { 'x-modelgate-cache': 'sometimes' }), (error: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(error.status, 400);
      assert.equal(error.code, 'invalid_body');
      assert.equal(error.param, 'x-modelgate-cache');
      return true;
    });
    await assert.rejects(ask(client, {}, { 'x-modelgate-cache-ttl': '-5' }), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && error.param === 'x-modelgate-cache-ttl');
  });

  test('another project never gets the answer, whatever it sends', async () => {
    const before = upstreamCalls();
    await ask(client);
    assert.equal((await ask(client)).cache, 'hit');
    fake.scriptChat({ kind: 'reply', text: 'Paris (asked elsewhere).', usage: { promptTokens: 12, completionTokens: 4 } });
    const elsewhere = await ask(otherProject);
    assert.equal(elsewhere.cache, 'miss');
    assert.equal(elsewhere.data.choices[0]!.message.content, 'Paris (asked elsewhere).');
    assert.equal(upstreamCalls() - before, 2);
  });

  test('a key of a project no policy applies to is answered without the cache and without the header', async () => {
    const before = upstreamCalls();
    const first = await ask(uncached);
    await ask(uncached);
    assert.equal(first.cache, null);
    assert.equal(upstreamCalls() - before, 2);
    assert.equal((await loggedRecord(gateway, first.requestId)).cache, null);
  });

  test('tool results and store: false are not cached unless the policy says so', async () => {
    const before = upstreamCalls();
    const withTool: OpenAI.ChatCompletionMessageParam[] = [
      ...messages(),
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Paris' },
    ];
    assert.equal((await ask(client, { messages: withTool })).cache, 'bypass');
    assert.equal((await ask(client, { messages: withTool })).cache, 'bypass');
    assert.equal((await ask(client, { store: false })).cache, 'bypass');
    assert.equal(upstreamCalls() - before, 3);
  });

  test('the same question from another end user (user, metadata) is the same entry; a change of model or sampling is not', async () => {
    const before = upstreamCalls();
    await ask(client, { user: 'student-1' });
    assert.equal((await ask(client, { user: 'student-2' })).cache, 'hit');
    assert.equal((await ask(client, { max_tokens: 30 })).cache, 'miss');
    assert.equal((await ask(client, { model: 'gpt-4o' })).cache, 'miss');
    assert.equal(upstreamCalls() - before, 3);
  });

  test('the metrics count hits, misses and bypasses by policy and surface, and the bytes kept', async () => {
    await ask(client);
    await ask(client);
    await ask(client, { temperature: 1 });
    const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const text = await response.text();
    for (const outcome of ['hit', 'miss', 'bypass']) {
      assert.match(text, new RegExp(`modelgate_cache_requests_total\\{[^}]*policy="class-answers"[^}]*surface="chat-completions"[^}]*outcome="${outcome}"[^}]*\\} [1-9]`));
    }
    assert.match(text, /modelgate_cache_stored_bytes_total\{[^}]*policy="class-answers"[^}]*\} [1-9]/);
    assert.match(text, /modelgate_cache_bytes(\{[^}]*\})? [1-9]/);
  });

  test('usage shows the hits and what they saved', async () => {
    await ask(client);
    const hit = await ask(client);
    await loggedRecord(gateway, hit.requestId);
    const usage = await gateway.admin('GET', '/admin/v1/usage?by=project');
    const row = usage.body.data.find((entry: { project_id: string }) => entry.project_id === 'class-101');
    assert.ok(row.cache_hits >= 1);
    assert.ok(row.saved_usd > 0);
  });
});
