import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, startFakeGemini, textResponse } from './fakes/gemini.js';
import { startOpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './helpers/gateway.js';

/*
 * The Responses format against every kind of provider: OpenAI's own Responses API (passed
 * through), an operator-declared OpenAI-compatible server, Anthropic and Gemini (translated).
 * Each pair runs the same cases through the official openai SDK: a JSON answer, a stream read
 * by the SDK's helper, usage, a stored response continued by previous_response_id, and a
 * provider error in the §4 shape.
 */

interface ScriptedAnswer {
  pieces: string[];
  inputTokens: number;
  outputTokens: number;
}

interface ProviderUnderTest {
  name: string;
  model: string;
  /** Starts the vendor's fake; returns how to script its next answers, its error, and how to stop it. */
  start(): Promise<{ gateway: (url: string) => TestGatewayOptions; url: string; answer(script: ScriptedAnswer): void; fail(): void; close(): Promise<void> }>;
}

const PROVIDERS: ProviderUnderTest[] = [
  {
    name: "OpenAI (its own Responses API, passed through)",
    model: 'gpt-4o-mini',
    async start() {
      const fake = await startOpenAIFake();
      return {
        url: fake.server.url,
        gateway: (url) => ({ env: { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' } }),
        answer: ({ pieces, inputTokens, outputTokens }) => fake.scriptResponses({ kind: 'text', deltas: pieces, usage: { promptTokens: inputTokens, completionTokens: outputTokens } }),
        fail: () => fake.failNext('/v1/responses', 500, 'The server had an error while processing your request.'),
        close: () => fake.close(),
      };
    },
  },
  {
    name: 'an OpenAI-compatible server (translated to chat completions)',
    model: 'llama3.2',
    async start() {
      const fake = await startOpenAIFake();
      return {
        url: fake.server.url,
        gateway: (url) => ({ configFile: { providers: { compatible: [{ name: 'ollama', baseUrl: `${url}/v1`, models: [{ id: 'llama3.2', upstreamId: 'llama3.2:3b' }] }] } } }),
        answer: ({ pieces, inputTokens, outputTokens }) => fake.scriptChat({ kind: 'stream', deltas: pieces, usage: { promptTokens: inputTokens, completionTokens: outputTokens } }),
        fail: () => fake.scriptChat({ kind: 'error', status: 500, message: 'model crashed' }),
        close: () => fake.close(),
      };
    },
  },
  {
    name: 'Anthropic (translated)',
    model: 'claude-sonnet-4-5',
    async start() {
      const fake = await startFakeAnthropic();
      return {
        url: fake.url,
        gateway: (url) => ({ env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY } }),
        answer: ({ pieces, inputTokens, outputTokens }) => fake.reply({ message: { content: [{ type: 'text', text: pieces.join('') }], usage: { input_tokens: inputTokens, output_tokens: outputTokens } } }),
        fail: () => fake.reply({ error: 'api_error', message: 'Internal server error' }),
        close: () => fake.close(),
      };
    },
  },
  {
    name: 'Gemini (translated)',
    model: 'gemini-2.5-flash',
    async start() {
      const fake = await startFakeGemini();
      return {
        url: fake.url,
        gateway: (url) => ({ env: { GEMINI_BASE_URL: url, GEMINI_API_KEY: FAKE_GEMINI_KEY } }),
        answer: ({ pieces, inputTokens, outputTokens }) => fake.reply('chat', { response: textResponse(pieces.join(''), { usage: { promptTokens: inputTokens, completionTokens: outputTokens } }) }),
        fail: () => fake.reply('chat', { error: 500 }),
        close: () => fake.close(),
      };
    },
  },
];

for (const provider of PROVIDERS) {
  describe(`Responses API × ${provider.name}`, () => {
    let fake: Awaited<ReturnType<ProviderUnderTest['start']>>;
    let gateway: TestGateway;
    let client: OpenAI;

    before(async () => {
      fake = await provider.start();
      gateway = await startTestGateway(fake.gateway(fake.url));
      client = new OpenAI({ apiKey: await gateway.createKey({ scopes: ['model:request'] }), baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 20_000 });
    });
    after(async () => {
      await gateway?.close();
      await fake?.close();
    });

    test('JSON: the answer as one message item, the usage in the API words, the caller\'s model', async () => {
      fake.answer({ pieces: ['Hello', ' there', '.'], inputTokens: 13, outputTokens: 3 });
      const response = await client.responses.create({ model: provider.model, input: 'Say hello.' });
      assert.equal(response.status, 'completed');
      assert.equal(response.model, provider.model);
      assert.equal(response.output_text, 'Hello there.');
      assert.deepEqual(response.output.map((item) => item.type), ['message']);
      assert.equal(response.usage?.input_tokens, 13);
      assert.equal(response.usage?.output_tokens, 3);
    });

    test('stream: the SDK helper builds the same response from the events, usage in response.completed', async () => {
      fake.answer({ pieces: ['Once', ' upon', ' a time.'], inputTokens: 7, outputTokens: 4 });
      const events: string[] = [];
      const stream = client.responses.stream({ model: provider.model, input: 'A story?' });
      stream.on('event', (event) => events.push(event.type));
      const final = await stream.finalResponse();
      assert.equal(final.output_text, 'Once upon a time.');
      assert.equal(final.usage?.output_tokens, 4);
      assert.deepEqual(events.slice(0, 2), ['response.created', 'response.in_progress']);
      assert.equal(events.at(-1), 'response.completed');
      assert.ok(events.includes('response.output_text.delta'));
    });

    test('previous_response_id continues the stored conversation', async () => {
      fake.answer({ pieces: ['Paris.'], inputTokens: 5, outputTokens: 1 });
      const first = await client.responses.create({ model: provider.model, input: 'Capital of France?' });
      fake.answer({ pieces: ['About 2 million.'], inputTokens: 9, outputTokens: 3 });
      const second = await client.responses.create({ model: provider.model, previous_response_id: first.id, input: 'Its population?' });
      assert.equal(second.output_text, 'About 2 million.');
      const items = await client.responses.inputItems.list(second.id, { order: 'asc' });
      assert.deepEqual(
        items.data.map((item) => (item as { role?: string }).role),
        ['user', 'assistant', 'user'],
      );
    });

    test('a provider failure is a 502 in the §4 shape', async () => {
      fake.fail();
      await assert.rejects(client.responses.create({ model: provider.model, input: 'Hi' }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 502);
        assert.equal((error.error as { code?: string }).code, 'provider_error');
        return true;
      });
    });
  });
}
