import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';

/*
 * The response cache on the Messages API (Anthropic's own and translated), the Responses API
 * (OpenAI's own and translated) and embeddings, through the official SDKs and their stream
 * helpers; and a hit's place in the key's limits.
 */

const CLAUDE = 'claude-sonnet-4-5';
const GPT = 'gpt-4o-mini';

describe('response cache: Messages, Responses and embeddings', () => {
  let openaiFake: OpenAIFake;
  let anthropicFake: FakeAnthropic;
  let gateway: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;
  let limitedKey: string;
  let question = 0;

  before(async () => {
    openaiFake = await startOpenAIFake();
    anthropicFake = await startFakeAnthropic();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${openaiFake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cache-test', ANTHROPIC_BASE_URL: anthropicFake.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY },
      configFile: { cache: [{ name: 'everything', apply: { all: true } }] },
    });
    const key = await gateway.createKey({ scopes: ['model:request'] });
    limitedKey = await gateway.createKey({ scopes: ['model:request'], rpm: 2 });
    anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await openaiFake?.server.close();
    await anthropicFake?.close();
  });
  beforeEach(() => {
    question += 1;
    anthropicFake.reply({ message: { content: [{ type: 'text', text: 'Paris.' }], usage: { input_tokens: 14, output_tokens: 2 } } });
    openaiFake.scriptChat({ kind: 'reply', text: 'Paris.', usage: { promptTokens: 12, completionTokens: 2 } });
  });

  const text = () => `What is the capital of France? (#${question})`;
  const anthropicCalls = () => anthropicFake.requests.filter((request) => request.path === '/v1/messages').length;
  const openaiCalls = (path: string) => openaiFake.server.requests.filter((request) => request.path === `/v1${path}`).length;

  describe('Messages API', () => {
    const params = () => ({ model: CLAUDE, max_tokens: 100, temperature: 0, messages: [{ role: 'user' as const, content: text() }] });

    test("Anthropic's own API: messages.create twice, one provider call; the record names the original", async () => {
      const before = anthropicCalls();
      const first = await anthropic.messages.create(params()).withResponse();
      const second = await anthropic.messages.create(params()).withResponse();
      assert.equal(first.response.headers.get('x-modelgate-cache'), 'miss');
      assert.equal(second.response.headers.get('x-modelgate-cache'), 'hit');
      assert.equal(anthropicCalls() - before, 1);
      assert.deepEqual(second.data.content, first.data.content);
      assert.equal(second.data.model, CLAUDE);
      const record = await loggedRecord(gateway, second.response.headers.get('x-request-id')!);
      assert.equal(record.detail.cache.source_request_id, first.response.headers.get('x-request-id'));
      assert.equal(record.cost_usd, 0);
    });

    test("Anthropic's own API: messages.stream → finalMessage replays the events", async () => {
      const before = anthropicCalls();
      const live = await anthropic.messages.stream(params()).finalMessage();
      const replay = anthropic.messages.stream(params());
      const deltas: string[] = [];
      replay.on('text', (delta) => deltas.push(delta));
      const replayed = await replay.finalMessage();
      assert.equal(anthropicCalls() - before, 1);
      assert.deepEqual(replayed.content, live.content);
      assert.equal(deltas.join(''), 'Paris.');
      assert.equal(replayed.usage.output_tokens, live.usage.output_tokens);
    });

    test('a model of another provider, translated: JSON and stream helpers', async () => {
      const before = openaiCalls('/chat/completions');
      const translated = { ...params(), model: GPT };
      const first = await anthropic.messages.create(translated);
      const second = await anthropic.messages.create(translated).withResponse();
      assert.equal(second.response.headers.get('x-modelgate-cache'), 'hit');
      assert.deepEqual(second.data.content, first.content);
      const live = await anthropic.messages.stream(translated).finalMessage();
      const replayed = await anthropic.messages.stream(translated).finalMessage();
      assert.deepEqual(replayed.content, live.content);
      assert.equal(openaiCalls('/chat/completions') - before, 2);
    });
  });

  describe('Responses API', () => {
    test("OpenAI's own API: a hit has an id of its own, which can be retrieved and continued", async () => {
      const before = openaiCalls('/responses');
      const params = { model: GPT, temperature: 0, input: text() };
      const first = await openai.responses.create(params).withResponse();
      const second = await openai.responses.create(params).withResponse();
      assert.equal(second.response.headers.get('x-modelgate-cache'), 'hit');
      assert.equal(openaiCalls('/responses') - before, 1);
      assert.equal(second.data.output_text, first.data.output_text);
      assert.notEqual(second.data.id, first.data.id);
      assert.match(second.data.id, /^resp_/);
      const stored = await openai.responses.retrieve(second.data.id);
      assert.equal(stored.output_text, first.data.output_text);
      // The provider never saw the hit's id: its conversation goes to it as items.
      const next = await openai.responses.create({ model: GPT, temperature: 0, previous_response_id: second.data.id, input: 'And of Italy?' });
      assert.equal(next.status, 'completed');
      const sent = openaiFake.server.requests.filter((request) => request.path === '/v1/responses').at(-1)!.json as { previous_response_id?: string; input: unknown[] };
      assert.equal(sent.previous_response_id, undefined);
      assert.ok(Array.isArray(sent.input) && sent.input.length >= 3);
    });

    test("OpenAI's own API: responses.stream → finalResponse replays the events under a new id", async () => {
      const before = openaiCalls('/responses');
      const params = { model: GPT, temperature: 0, input: text() };
      const live = await openai.responses.stream(params).finalResponse();
      const replayed = await openai.responses.stream(params).finalResponse();
      assert.equal(openaiCalls('/responses') - before, 1);
      assert.equal(replayed.output_text, live.output_text);
      assert.notEqual(replayed.id, live.id);
      assert.equal((await openai.responses.retrieve(replayed.id)).output_text, live.output_text);
    });

    test('a model of another provider, translated: JSON and stream', async () => {
      const before = anthropicCalls();
      const params = { model: CLAUDE, temperature: 0, input: text() };
      const first = await openai.responses.create(params);
      const second = await openai.responses.create(params);
      assert.equal(second.output_text, first.output_text);
      assert.notEqual(second.id, first.id);
      const live = await openai.responses.stream(params).finalResponse();
      const replayed = await openai.responses.stream(params).finalResponse();
      assert.equal(replayed.output_text, live.output_text);
      assert.equal(anthropicCalls() - before, 2);
    });
  });

  test('embeddings: the same input is embedded once; floats and base64 are separate entries', async () => {
    const before = openaiCalls('/embeddings');
    const input = [text(), 'second'];
    const first = await openai.embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'float' });
    const second = await openai.embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'float' }).withResponse();
    assert.equal(second.response.headers.get('x-modelgate-cache'), 'hit');
    assert.deepEqual(second.data.data, first.data);
    assert.equal(second.data.model, 'text-embedding-3-small');
    const base64 = await openai.embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'base64' });
    assert.equal(base64.data.length, 2);
    assert.equal(openaiCalls('/embeddings') - before, 2);
  });

  test("a hit still counts against the key's requests per minute, and reserves no tokens", async () => {
    const limited = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: limitedKey, maxRetries: 0 });
    const params = { model: GPT, temperature: 0, messages: [{ role: 'user' as const, content: text() }] };
    await awayFromMinuteBoundary();
    await limited.chat.completions.create(params);
    const hit = await limited.chat.completions.create(params).withResponse();
    assert.equal(hit.response.headers.get('x-modelgate-cache'), 'hit');
    await assert.rejects(limited.chat.completions.create(params), (error: InstanceType<typeof OpenAI.APIError>) => error.status === 429 && error.code === 'rate_limit_exceeded');
  });
});
