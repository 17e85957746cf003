import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { FAKE_ANTHROPIC_KEY, messageBody, OVERLOADED_FRAME, startFakeAnthropic, streamFramesOf, type FakeAnthropic } from './fakes/anthropic.js';
import { spyOnEstimates } from './helpers/estimates.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startBackendGateway, STORAGE_BACKENDS } from './helpers/storage-backends.js';

/*
 * The Responses API through a real gateway, driven by the official openai SDK: a translated
 * provider (Anthropic's fake) and OpenAI's own Responses API passed through (OpenAI's fake);
 * stored responses bound to their key; usage and cost in the request log.
 */

const UPSTREAM_KEY = 'sk-test-fake-openai-0123456789';
const CLAUDE = 'claude-sonnet-4-5';
const GPT = 'gpt-4o-mini';

/** An SDK client that remembers the request id of the last response it received. */
function clientOf(gateway: TestGateway, key: string): { client: OpenAI; lastRequestId: () => string } {
  let requestId = '';
  const client = new OpenAI({
    apiKey: key,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 20_000,
    fetch: async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      requestId = response.headers.get('x-request-id') ?? '';
      return response;
    },
  });
  return { client, lastRequestId: () => requestId };
}

async function notFound(call: Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof OpenAI.NotFoundError, `expected NotFoundError, got ${String(error)}`);
    assert.equal((error.error as { code?: string }).code, 'not_found');
    return true;
  });
}

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Get the weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe('Responses API through the gateway (openai SDK)', () => {
  let openai: OpenAIFake;
  let anthropic: FakeAnthropic;
  let gateway: TestGateway;
  let sdk: ReturnType<typeof clientOf>;
  let other: OpenAI;

  before(async () => {
    openai = await startOpenAIFake();
    anthropic = await startFakeAnthropic();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${openai.server.url}/v1`, OPENAI_API_KEY: UPSTREAM_KEY, ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY },
    });
    sdk = clientOf(gateway, await gateway.createKey({ scopes: ['model:request'] }));
    other = clientOf(gateway, await gateway.createKey({ scopes: ['model:request'] })).client;
  });
  after(async () => {
    await gateway?.close();
    await openai?.close();
    await anthropic?.close();
  });
  beforeEach(() => anthropic.reply({ message: {} }));

  describe('a translated provider', () => {
    test('responses.create: instructions and input reach the model as chat; usage and cost are logged', async () => {
      anthropic.reply({ message: { content: [{ type: 'text', text: 'Bonjour.' }], usage: { input_tokens: 20, output_tokens: 3 } } });
      const response = await sdk.client.responses.create({ model: CLAUDE, instructions: 'Answer in French.', input: 'Say hello.', max_output_tokens: 50, metadata: { team: 'web' } });
      assert.match(response.id, /^resp_/);
      assert.equal(response.object, 'response');
      assert.equal(response.status, 'completed');
      assert.equal(response.model, CLAUDE);
      assert.equal(response.output_text, 'Bonjour.');
      assert.deepEqual(response.metadata, { team: 'web' });
      assert.equal(response.usage?.input_tokens, 20);
      assert.equal(response.usage?.output_tokens, 3);
      const sent = anthropic.lastBody();
      assert.equal(sent.system, 'Answer in French.');
      assert.equal(sent.max_tokens, 50);
      assert.deepEqual(sent.messages, [{ role: 'user', content: [{ type: 'text', text: 'Say hello.' }] }]);
      const record = await loggedRecord(gateway, sdk.lastRequestId());
      assert.equal(record.endpoint, '/v1/responses');
      assert.equal(record.requested_model, CLAUDE);
      assert.equal(record.provider, 'anthropic');
      assert.equal(record.streaming, false);
      assert.equal(record.usage.prompt_tokens, 20);
      assert.equal(record.usage.completion_tokens, 3);
      assert.ok(record.cost_usd > 0, 'the call is priced');
    });

    test('responses.stream → finalResponse: the helper accepts the events; usage in response.completed and the log', async () => {
      anthropic.reply({ message: { content: [{ type: 'text', text: 'Once upon a time.' }], usage: { input_tokens: 11, output_tokens: 5 } } });
      const stream = sdk.client.responses.stream({ model: CLAUDE, input: 'Tell a story.' });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
      const final = await stream.finalResponse();
      assert.equal(final.status, 'completed');
      assert.equal(final.output_text, 'Once upon a time.');
      assert.equal(deltas.join(''), 'Once upon a time.');
      assert.ok(deltas.length > 1, 'the text came in pieces');
      assert.equal(final.usage?.input_tokens, 11);
      assert.equal(final.usage?.output_tokens, 5);
      const record = await loggedRecord(gateway, sdk.lastRequestId());
      assert.equal(record.streaming, true);
      assert.equal(record.status, 200);
      assert.equal(record.usage.prompt_tokens, 11);
      assert.equal(record.usage.completion_tokens, 5);
      assert.ok(record.cost_usd > 0);
      // Stored before the stream's end was sent: readable at once.
      assert.equal((await sdk.client.responses.retrieve(final.id)).output_text, 'Once upon a time.');
    });

    test('a function tool round trip continues by previous_response_id', async () => {
      anthropic.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } }], stop_reason: 'tool_use' } });
      const first = await sdk.client.responses.create({ model: CLAUDE, input: 'Weather in Paris?', tools: [weatherTool], tool_choice: 'required' });
      const call = first.output.find((item) => item.type === 'function_call');
      assert.ok(call !== undefined && call.type === 'function_call');
      assert.equal(call.name, 'get_weather');
      assert.equal(call.call_id, 'toolu_01A');
      assert.deepEqual(JSON.parse(call.arguments), { city: 'Paris' });
      assert.deepEqual(anthropic.lastBody().tool_choice, { type: 'any' });

      anthropic.reply({ message: { content: [{ type: 'text', text: 'It is 18°C in Paris.' }] } });
      const second = await sdk.client.responses.create({
        model: CLAUDE,
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"celsius":18}' }],
        tools: [weatherTool],
      });
      assert.equal(second.output_text, 'It is 18°C in Paris.');
      assert.equal(second.previous_response_id, first.id);
      const sent = anthropic.lastBody();
      assert.deepEqual(
        sent.messages.map((message: { role: string; content: { type: string }[] }) => [message.role, message.content.map((block) => block.type)]),
        [
          ['user', ['text']],
          ['assistant', ['tool_use']],
          ['user', ['tool_result']],
        ],
      );
      assert.equal(sent.messages[2].content[0].tool_use_id, 'toolu_01A');

      const items = await sdk.client.responses.inputItems.list(second.id, { order: 'asc' });
      assert.deepEqual(
        items.data.map((item) => item.type),
        ['message', 'function_call', 'function_call_output'],
      );
      // The SDK sends `limit` in the query string, as text (`?limit=2`).
      const page = await sdk.client.responses.inputItems.list(second.id, { order: 'asc', limit: 2 });
      assert.deepEqual(
        page.data.map((item) => item.type),
        ['message', 'function_call'],
      );
      assert.equal(page.has_more, true);
    });

    test('a streamed function call reaches the helper with its arguments; the limits count the stored conversation', async () => {
      anthropic.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01S', name: 'get_weather', input: { city: 'Oslo' } }], stop_reason: 'tool_use' } });
      const argumentDeltas: string[] = [];
      const stream = sdk.client.responses.stream({ model: CLAUDE, input: `Weather in Oslo? ${'Some context. '.repeat(400)}`, tools: [weatherTool] });
      stream.on('response.function_call_arguments.delta', (event) => argumentDeltas.push(event.delta));
      const first = await stream.finalResponse();
      const call = first.output.find((item) => item.type === 'function_call');
      assert.ok(call !== undefined && call.type === 'function_call');
      assert.equal(call.call_id, 'toolu_01S');
      assert.deepEqual(JSON.parse(call.arguments), { city: 'Oslo' });
      assert.equal(argumentDeltas.join(''), call.arguments);

      const estimates = spyOnEstimates(gateway);
      anthropic.reply({ message: { content: [{ type: 'text', text: 'Cold.' }] } });
      await sdk.client.responses.create({ model: CLAUDE, input: 'It is -3C in Oslo, said the weather tool.' });
      await sdk.client.responses.create({ model: CLAUDE, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '-3C' }] });
      assert.ok(estimates[1]!.tokens > estimates[0]!.tokens + 1000, `the 5,600-character conversation is in the estimate: ${estimates[0]!.tokens} → ${estimates[1]!.tokens}`);
    });

    test('text.format with a JSON schema: the model is held to it and the text is the JSON', async () => {
      anthropic.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01B', name: 'city', input: { name: 'Paris', country: 'France' } }], stop_reason: 'tool_use' } });
      const schema = { type: 'object', properties: { name: { type: 'string' }, country: { type: 'string' } }, required: ['name', 'country'], additionalProperties: false };
      const response = await sdk.client.responses.create({ model: CLAUDE, input: 'A capital?', text: { format: { type: 'json_schema', name: 'city', schema, strict: true } } });
      assert.deepEqual(JSON.parse(response.output_text), { name: 'Paris', country: 'France' });
      const sent = anthropic.lastBody();
      assert.deepEqual(sent.tool_choice, { type: 'tool', name: 'city' });
      assert.deepEqual(sent.tools[0].input_schema, schema);
    });

    test('a provider failing mid-stream ends it with response.failed; the log says provider_error', async () => {
      const frames = streamFramesOf(messageBody({ content: [{ type: 'text', text: 'Partial answer' }], usage: { input_tokens: 15 } }));
      anthropic.reply({ stream: [...frames.slice(0, frames.findIndex(([event]) => event === 'content_block_stop')), OVERLOADED_FRAME] });
      const stream = sdk.client.responses.stream({ model: CLAUDE, input: 'Hi' });
      const final = await stream.finalResponse();
      assert.equal(final.status, 'failed');
      assert.equal(final.error?.code, 'server_error');
      assert.equal(final.output_text, 'Partial answer');
      const record = await loggedRecord(gateway, sdk.lastRequestId());
      assert.equal(record.error_code, 'provider_error');
      assert.equal(record.usage.prompt_tokens, 15, 'the usage known so far is counted');
    });

    test('reasoning maps to thinking; hints only OpenAI acts on are left out and named in the log and x-modelgate-dropped', async () => {
      const { response } = await sdk.client.responses.create({ model: CLAUDE, input: 'Hi', reasoning: { effort: 'low' }, truncation: 'auto', prompt_cache_key: 'k1' }).withResponse();
      assert.equal(anthropic.lastBody().reasoning, undefined);
      assert.deepEqual(anthropic.lastBody().thinking, { type: 'enabled', budget_tokens: 2048 });
      assert.equal(response.headers.get('x-modelgate-dropped'), 'truncation,prompt_cache_key');
      const record = await loggedRecord(gateway, sdk.lastRequestId());
      assert.deepEqual(record.detail.droppedFields, ['truncation', 'prompt_cache_key']);
    });

    test('built-in web search is served by the vendor\'s own search tool', async () => {
      await sdk.client.responses.create({ model: CLAUDE, input: 'News?', tools: [{ type: 'web_search' }] });
      assert.deepEqual(anthropic.lastBody().tools, [{ type: 'web_search_20250305', name: 'web_search' }]);
    });

    test('a built-in tool only OpenAI runs is a 400 naming it, nothing sent', async () => {
      const before = anthropic.requests.length;
      await assert.rejects(sdk.client.responses.create({ model: CLAUDE, input: 'Run it', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal((error.error as { param?: string; code?: string }).param, 'tools[0].type');
        assert.equal((error.error as { code?: string }).code, 'unsupported_field');
        return true;
      });
      assert.equal(anthropic.requests.length, before);
    });
  });

  describe('the model-call path', () => {
    test("a key's allowedModels hold on both paths, and a model of another mode is refused, before anything is sent", async () => {
      const limited = clientOf(gateway, await gateway.createKey({ scopes: ['model:request'], allowedModels: ['gemini-2.5-flash'] })).client;
      const sent = openai.server.requests.length + anthropic.requests.length;
      for (const model of [CLAUDE, GPT]) {
        await assert.rejects(limited.responses.create({ model, input: 'Hi' }), (error: unknown) => {
          assert.ok(error instanceof OpenAI.PermissionDeniedError, String(error));
          assert.deepEqual([(error.error as { code?: string }).code, (error.error as { param?: string }).param], ['model_not_allowed', 'model']);
          return true;
        });
      }
      await assert.rejects(sdk.client.responses.create({ model: 'text-embedding-3-small', input: 'Hi' }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal((error.error as { code?: string }).code, 'model_mode_mismatch');
        return true;
      });
      assert.equal(openai.server.requests.length + anthropic.requests.length, sent);
    });
  });

  describe('stored responses', () => {
    test('retrieve, input_items and delete; another key gets 404 for every path, previous_response_id too', async () => {
      const created = await sdk.client.responses.create({ model: CLAUDE, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Remember me.' }] }] });
      const retrieved = await sdk.client.responses.retrieve(created.id);
      assert.deepEqual(retrieved, { ...created, output_text: retrieved.output_text });
      const items = await sdk.client.responses.inputItems.list(created.id);
      assert.equal(items.data.length, 1);
      assert.deepEqual((items.data[0] as { content: unknown }).content, [{ type: 'input_text', text: 'Remember me.' }]);

      await notFound(other.responses.retrieve(created.id));
      await notFound(other.responses.inputItems.list(created.id));
      await notFound(other.responses.delete(created.id));
      await notFound(other.responses.create({ model: CLAUDE, previous_response_id: created.id, input: 'And now?' }));
      await notFound(other.responses.create({ model: GPT, previous_response_id: created.id, input: 'And now?' }));

      await sdk.client.responses.delete(created.id);
      await notFound(sdk.client.responses.retrieve(created.id));
      await notFound(sdk.client.responses.delete(created.id));
    });

    test('replaying a stored response as events is refused with a 400 naming stream', async () => {
      const created = await sdk.client.responses.create({ model: CLAUDE, input: 'Replay me.' });
      await assert.rejects(sdk.client.responses.retrieve(created.id, { stream: true }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal((error.error as { param?: string }).param, 'stream');
        return true;
      });
    });

    test('a background response is refused with a 400 naming background, nothing sent', async () => {
      const before = openai.server.requests.length;
      await assert.rejects(sdk.client.responses.create({ model: GPT, input: 'Later.', background: true }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal((error.error as { param?: string }).param, 'background');
        return true;
      });
      assert.equal(openai.server.requests.length, before);
    });

    test('store: false is answered and never kept', async () => {
      const response = await sdk.client.responses.create({ model: CLAUDE, input: 'Forget me.', store: false });
      assert.equal((response as unknown as { store: unknown }).store, false);
      await notFound(sdk.client.responses.retrieve(response.id));
    });
  });

  describe("OpenAI's own Responses API", () => {
    test('the body goes through intact; a reasoning item comes back as OpenAI sent it', async () => {
      openai.scriptResponses({ kind: 'text', deltas: ['Forty', '-two.'], usage: { promptTokens: 30, completionTokens: 7 } });
      const response = await sdk.client.responses.create({
        model: GPT,
        input: 'The answer?',
        reasoning: { effort: 'low' },
        include: ['reasoning.encrypted_content'],
        tools: [{ type: 'web_search' }],
        store: false,
      });
      assert.equal(response.model, GPT);
      assert.equal(response.output_text, 'Forty-two.');
      const reasoning = response.output[0];
      assert.ok(reasoning !== undefined && reasoning.type === 'reasoning');
      assert.match(String(reasoning.encrypted_content), /^gAAAAA/);
      assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: '**Answering briefly**' }]);
      const sent = openai.server.requests.at(-1)!;
      assert.equal(sent.path, '/v1/responses');
      assert.equal(sent.json.model, GPT);
      assert.deepEqual(sent.json.reasoning, { effort: 'low' });
      assert.deepEqual(sent.json.include, ['reasoning.encrypted_content']);
      assert.deepEqual(sent.json.tools, [{ type: 'web_search' }]);
      assert.equal(sent.json.store, false);
      const record = await loggedRecord(gateway, sdk.lastRequestId());
      assert.equal(record.provider, 'openai');
      assert.equal(record.detail?.extra, undefined, 'nothing was left out');
      assert.equal(record.usage.prompt_tokens, 30);
      assert.equal(record.usage.completion_tokens, 7);
      assert.ok(record.cost_usd > 0);
    });

    test('a stream passes through: the helper gets the reasoning item and the text; usage is logged', async () => {
      openai.scriptResponses({ kind: 'text', deltas: ['Hel', 'lo', '!'], usage: { promptTokens: 9, completionTokens: 3 } });
      const stream = sdk.client.responses.stream({ model: GPT, input: 'Hi', reasoning: { effort: 'low' } });
      const final = await stream.finalResponse();
      assert.equal(final.model, GPT);
      assert.deepEqual(final.output.map((item) => item.type), ['reasoning', 'message']);
      assert.equal(final.output_text, 'Hello!');
      assert.equal(final.usage?.total_tokens, 12);
      const record = await loggedRecord(gateway, sdk.lastRequestId());
      assert.equal(record.streaming, true);
      assert.equal(record.usage.prompt_tokens, 9);
      assert.ok(record.cost_usd > 0);
    });

    test('previous_response_id of its own response is sent on; a translated conversation is sent as items', async () => {
      openai.scriptResponses({ kind: 'function-call', name: 'get_weather', arguments: '{"city":"Rome"}', usage: { promptTokens: 10, completionTokens: 5 } });
      const first = await sdk.client.responses.create({ model: GPT, input: 'Weather in Rome?', tools: [weatherTool] });
      const call = first.output.find((item) => item.type === 'function_call');
      assert.ok(call !== undefined && call.type === 'function_call');
      openai.scriptResponses({ kind: 'text', deltas: ['Sunny.'], usage: { promptTokens: 12, completionTokens: 2 } });
      const second = await sdk.client.responses.create({ model: GPT, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }] });
      assert.equal(second.output_text, 'Sunny.');
      assert.equal(openai.server.requests.at(-1)!.json.previous_response_id, first.id);

      anthropic.reply({ message: { content: [{ type: 'text', text: 'Bonjour.' }] } });
      const translated = await sdk.client.responses.create({ model: CLAUDE, input: 'Say hello.' });
      const switched = await sdk.client.responses.create({ model: GPT, previous_response_id: translated.id, input: 'Again?' });
      assert.equal(switched.output_text, 'Sunny.');
      const sent = openai.server.requests.at(-1)!.json;
      assert.equal(sent.previous_response_id, undefined);
      assert.deepEqual(
        sent.input.map((item: { role?: string; type?: string }) => item.role ?? item.type),
        ['user', 'assistant', 'user'],
      );
    });

    test('another key cannot continue or read an OpenAI response either', async () => {
      const created = await sdk.client.responses.create({ model: GPT, input: 'Mine.' });
      await notFound(other.responses.retrieve(created.id));
      const before = openai.server.requests.length;
      await notFound(other.responses.create({ model: GPT, previous_response_id: created.id, input: 'Yours?' }));
      assert.equal(openai.server.requests.length, before, 'nothing reached OpenAI');
    });
  });
});

for (const backend of STORAGE_BACKENDS) {
  describe(`stored responses through the gateway on ${backend.name}`, { skip: backend.skip }, () => {
    test('a streamed response is stored, continued by previous_response_id and listed with its conversation', async () => {
      const running = await startBackendGateway(backend);
      try {
        const { client } = clientOf(running.gateway, await running.gateway.createKey({ scopes: ['model:request'] }));
        const first = await client.responses.stream({ model: GPT, input: 'First turn.' }).finalResponse();
        const second = await client.responses.create({ model: GPT, previous_response_id: first.id, input: 'Second turn.' });
        assert.equal(running.fake.server.requests.at(-1)!.json.previous_response_id, first.id);
        const items = await client.responses.inputItems.list(second.id, { order: 'asc' });
        assert.deepEqual(
          items.data.map((item) => (item as { role?: string }).role),
          ['user', 'assistant', 'user'],
        );
        assert.equal((await client.responses.retrieve(second.id)).output_text, 'Hello from the fake.');
      } finally {
        await running.close();
      }
    });
  });
}
