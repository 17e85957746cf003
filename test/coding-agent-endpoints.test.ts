import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { fakeTokenCount, FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The endpoints coding agents call besides the model calls themselves, with the official
 * SDKs as clients: GET /v1/models in the Messages API's list shape (anthropic-version) and
 * with `created` in OpenAI's; POST /v1/responses/input_tokens and /v1/responses/compact over
 * a model of each vendor; a WebSocket upgrade on /v1/responses; and dated vendor snapshots
 * priced as their model in the request log.
 */

describe('endpoints of the coding agents', () => {
  let openaiFake: OpenAIFake;
  let anthropicFake: FakeAnthropic;
  let geminiFake: FakeGemini;
  let gateway: TestGateway;
  let key: string;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    openaiFake = await startOpenAIFake();
    anthropicFake = await startFakeAnthropic();
    geminiFake = await startFakeGemini();
    gateway = await startTestGateway({
      env: {
        OPENAI_BASE_URL: `${openaiFake.server.url}/v1`,
        OPENAI_API_KEY: 'sk-test-fake-openai-0123456789',
        ANTHROPIC_BASE_URL: anthropicFake.url,
        ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
        GEMINI_BASE_URL: geminiFake.url,
        GEMINI_API_KEY: FAKE_GEMINI_KEY,
      },
      configFile: { providers: { compatible: [{ name: 'ollama', baseUrl: `${openaiFake.server.url}/v1`, models: [{ id: 'llama3.2' }] }] } },
    });
    key = await gateway.createKey({ scopes: ['model:request'] });
    openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await openaiFake?.server.close();
    await anthropicFake?.close();
    await geminiFake?.close();
  });

  const upstream = (fake: { requests: { path: string; json: unknown }[] }, path: string) => fake.requests.filter((request) => request.path.startsWith(path)).at(-1);

  describe('GET /v1/models', () => {
    test('with anthropic-version: the chat models in the Messages API list shape, newest first, paged by limit and after_id', async () => {
      const firstPage = await anthropic.models.list({ limit: 3 });
      assert.equal(firstPage.data.length, 3);
      assert.equal(firstPage.has_more, true);
      assert.equal(firstPage.first_id, firstPage.data[0]!.id);
      assert.equal(firstPage.last_id, firstPage.data[2]!.id);
      const all = [];
      for await (const model of anthropic.models.list({ limit: 5 })) all.push(model);
      const chatIds = (gateway.gateway.context.catalog.list().filter((entry) => entry.mode === 'chat')).map((entry) => entry.id);
      assert.deepEqual(new Set(all.map((model) => model.id)), new Set(chatIds), 'every chat model once, across the pages');
      assert.equal(all.length, chatIds.length);
      const created = all.map((model) => Date.parse(model.created_at));
      assert.deepEqual(created, [...created].sort((a, b) => b - a), 'newest first');
      const sonnet = all.find((model) => model.id === 'claude-sonnet-4-5')!;
      assert.deepEqual(sonnet, { type: 'model', id: 'claude-sonnet-4-5', display_name: 'claude-sonnet-4-5', created_at: '2025-09-29T00:00:00Z' });
      assert.ok(all.some((model) => model.id === 'gpt-4o-mini') && all.every((model) => !model.id.startsWith('text-embedding')), 'chat models of every vendor, nothing else');
    });

    test('with anthropic-version: before_id pages backwards, and an unknown id is a 400 naming the parameter', async () => {
      const page = await anthropic.models.list({ limit: 4 });
      const before = await fetch(`${gateway.url}/v1/models?before_id=${page.data[3]!.id}&limit=2`, { headers: { 'anthropic-version': '2023-06-01', 'x-api-key': key } });
      const body = (await before.json()) as { data: { id: string }[]; has_more: boolean };
      assert.deepEqual(body.data.map((model) => model.id), [page.data[1]!.id, page.data[2]!.id]);
      assert.equal(body.has_more, true);
      const unknown = await fetch(`${gateway.url}/v1/models?after_id=claude-nope`, { headers: { 'anthropic-version': '2023-06-01' } });
      assert.equal(unknown.status, 400);
      assert.match(((await unknown.json()) as { error: { message: string; param: string } }).error.param, /after_id/);
    });

    test('a model by id with anthropic-version: the Messages API model object, a dated snapshot too', async () => {
      assert.deepEqual(await anthropic.models.retrieve('claude-haiku-4-5-20251001'), { type: 'model', id: 'claude-haiku-4-5-20251001', display_name: 'claude-haiku-4-5', created_at: '2025-10-01T00:00:00Z' });
    });

    test('without it: the OpenAI list, every entry with created (the release, in Unix seconds)', async () => {
      const models = [];
      for await (const model of openai.models.list()) models.push(model);
      assert.ok(models.length > 10);
      for (const model of models) assert.ok(Number.isInteger(model.created) && model.created > 0, `${model.id}: created ${String(model.created)}`);
      assert.equal(models.find((model) => model.id === 'gpt-4o-mini')!.created, Date.UTC(2024, 6, 18) / 1000);
      const listedAt = models.find((model) => model.id === 'llama3.2')!.created;
      assert.ok(Math.abs(listedAt - Date.now() / 1000) < 3600, 'an operator model without a release date: when the gateway listed it');
      assert.equal((await openai.models.retrieve('claude-sonnet-4-5')).created, Date.UTC(2025, 8, 29) / 1000);
    });
  });

  describe('POST /v1/responses/input_tokens', () => {
    const input = [{ role: 'user' as const, content: 'How many tokens is this?' }];

    test("an OpenAI model: OpenAI's own count, the body as sent", async () => {
      const count = await openai.responses.inputTokens.count({ model: 'gpt-4o-mini', input, instructions: 'Be brief.' });
      assert.equal(count.object, 'response.input_tokens');
      const received = upstream(openaiFake.server, '/v1/responses/input_tokens')!;
      assert.deepEqual(received.json, { model: 'gpt-4o-mini', input, instructions: 'Be brief.' });
      assert.equal(count.input_tokens, Math.ceil(JSON.stringify(['Be brief.', input]).length / 4), "the fake's count");
    });

    test("a Claude model: Anthropic's count_tokens of the translated request", async () => {
      const count = await openai.responses.inputTokens.count({ model: 'claude-sonnet-4-5', input, instructions: 'Be brief.' });
      const received = upstream(anthropicFake.server, '/v1/messages/count_tokens')!;
      assert.equal((received.json as { model: string }).model, 'claude-sonnet-4-5');
      assert.equal((received.json as { max_tokens?: number }).max_tokens, undefined, 'count_tokens takes no max_tokens');
      assert.equal(count.input_tokens, fakeTokenCount(received.json));
    });

    test("a Gemini model: Gemini's countTokens of the whole generateContent request", async () => {
      const count = await openai.responses.inputTokens.count({ model: 'gemini-2.5-flash', input, instructions: 'Be brief.' });
      const received = upstream(geminiFake.server, '/v1beta/models/gemini-2.5-flash:countTokens')! as { json: { generateContentRequest: { model: string; systemInstruction: unknown } } };
      assert.equal(received.json.generateContentRequest.model, 'models/gemini-2.5-flash');
      assert.deepEqual(received.json.generateContentRequest.systemInstruction, { parts: [{ text: 'Be brief.' }] });
      assert.equal(count.input_tokens, Math.ceil(JSON.stringify(received.json).length / 4));
    });

    test('a provider without a count endpoint: an estimate, and no model call', async () => {
      const before = openaiFake.server.requests.length;
      const count = await openai.responses.inputTokens.count({ model: 'llama3.2', input: 'x'.repeat(400) });
      assert.equal(count.input_tokens, 100);
      assert.equal(openaiFake.server.requests.length, before);
    });
  });

  describe('POST /v1/responses/compact', () => {
    const conversation = [
      { role: 'user' as const, content: 'List the files.' },
      { role: 'assistant' as const, content: 'a.ts and b.ts' },
      { role: 'user' as const, content: 'Now compact this.' },
    ];

    test("an OpenAI model: OpenAI's own compaction, passed through, usage and cost in the log", async () => {
      const response = await openai.responses.compact({ model: 'gpt-4o-mini', input: conversation }).withResponse();
      assert.equal(response.data.object, 'response.compaction');
      assert.deepEqual(response.data.output.map((item) => item.type), ['message', 'message', 'compaction']);
      assert.deepEqual(upstream(openaiFake.server, '/v1/responses/compact')!.json, { model: 'gpt-4o-mini', input: conversation });
      const record = await loggedRecord(gateway, response.response.headers.get('x-request-id')!);
      assert.equal(record.status, 200);
      assert.equal(record.usage.completion_tokens, 42);
      assert.ok(record.cost_usd > 0);
    });

    test('a Claude model (a dated snapshot): the model summarises; the user messages and the summary come back, priced as its model', async () => {
      anthropicFake.reply({ message: { content: [{ type: 'text', text: 'The user listed a.ts and b.ts.' }], usage: { input_tokens: 1000, output_tokens: 100 } } });
      const response = await openai.responses.compact({ model: 'claude-haiku-4-5-20251001', input: conversation }).withResponse();
      const sent = upstream(anthropicFake.server, '/v1/messages')!.json as { model: string; messages: { role: string; content: unknown }[]; tools?: unknown };
      assert.equal(sent.model, 'claude-haiku-4-5-20251001', 'the vendor gets the snapshot asked for');
      assert.match(JSON.stringify(sent.messages.at(-1)), /Summarise the conversation above/);
      assert.equal(sent.tools, undefined);
      const output = response.data.output as unknown as { type: string; role: string; content: unknown }[];
      assert.deepEqual(output.map((item) => [item.type, item.role]), [['message', 'user'], ['message', 'user'], ['message', 'assistant']]);
      assert.deepEqual(output[2]!.content, [{ type: 'output_text', text: 'The user listed a.ts and b.ts.', annotations: [] }]);
      assert.equal(response.data.usage.input_tokens, 1000);
      const record = await loggedRecord(gateway, response.response.headers.get('x-request-id')!);
      assert.equal(record.resolved_model, 'claude-haiku-4-5');
      // Claude Haiku 4.5: $1 per million input tokens, $5 per million output tokens.
      assert.equal(record.cost_usd, 0.0015);
      anthropicFake.reply({ message: {} });
    });

    test('a Gemini model: summarised by the model itself', async () => {
      const response = await openai.responses.compact({ model: 'gemini-2.5-flash', input: conversation });
      assert.equal((response.output.at(-1) as { role?: string }).role, 'assistant');
      assert.match(JSON.stringify(upstream(geminiFake.server, '/v1beta/models/gemini-2.5-flash:generateContent')!.json), /Summarise the conversation above/);
    });
  });

  test('a WebSocket upgrade on /v1/responses is 426 Upgrade Required (clients go on over HTTP), never 404', async () => {
    const url = new URL(gateway.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          [
            'GET /v1/responses HTTP/1.1',
            `Host: ${url.host}`,
            'Upgrade: websocket',
            'Connection: Upgrade',
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
            'Sec-WebSocket-Version: 13',
            `Authorization: Bearer ${key}`,
            '',
            '',
          ].join('\r\n'),
        );
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n') && text.includes('}')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 426 /);
    assert.match(answer, /\r\nupgrade: HTTP\/1\.1\r\n/i);
    assert.match(answer, /"code":"upgrade_required"/);
  });

  test('dated snapshots are priced as their model in the request log, and reach the vendor as sent', async () => {
    openaiFake.scriptChat({ kind: 'reply', text: 'Hi.', usage: { promptTokens: 1000, completionTokens: 100 } });
    const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini-2024-07-18', messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    assert.equal((upstream(openaiFake.server, '/v1/chat/completions')!.json as { model: string }).model, 'gpt-4o-mini-2024-07-18');
    const record = await loggedRecord(gateway, chat.response.headers.get('x-request-id')!);
    // GPT-4o mini: $0.15 per million input tokens, $0.60 per million output tokens.
    assert.equal(record.cost_usd, 0.00021);
    assert.equal(record.resolved_model, 'gpt-4o-mini');
    const message = await anthropic.messages.create({ model: 'claude-sonnet-4-5-20250929', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    const claude = await loggedRecord(gateway, message.response.headers.get('x-request-id')!);
    // Claude Sonnet 4.5: $3 / $15 per million; the fake's default usage is 12 in, 9 out.
    assert.equal(claude.cost_usd, 0.000171);
  });
});
