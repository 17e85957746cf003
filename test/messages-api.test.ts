import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { fakeTokenCount, FAKE_ANTHROPIC_KEY, OVERLOADED_FRAME, startFakeAnthropic, streamFramesOf, messageBody, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { FAKE_PNG_BASE64, startOpenAIFake, viewOfChatRequest, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * POST /v1/messages and /v1/messages/count_tokens with the official Anthropic SDK as the
 * client: models of OpenAI (translated through the internal chat call) and of Anthropic (the
 * Messages API passed through), streamed and not, tools, images, errors, and what the request
 * log keeps of each.
 */

const OPENAI_KEY = 'sk-upstream-openai-test';

/** The event names of a raw Messages stream, in order. */
function eventNames(text: string): string[] {
  return [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]!);
}

describe('Messages API', () => {
  let anthropicFake: FakeAnthropic;
  let openaiFake: OpenAIFake;
  let geminiFake: FakeGemini;
  let gateway: TestGateway;
  let key: string;
  let client: Anthropic;

  before(async () => {
    anthropicFake = await startFakeAnthropic();
    openaiFake = await startOpenAIFake();
    geminiFake = await startFakeGemini();
    gateway = await startTestGateway({
      env: {
        ANTHROPIC_BASE_URL: anthropicFake.url,
        ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
        OPENAI_BASE_URL: `${openaiFake.server.url}/v1`,
        OPENAI_API_KEY: OPENAI_KEY,
        GEMINI_BASE_URL: geminiFake.url,
        GEMINI_API_KEY: FAKE_GEMINI_KEY,
      },
    });
    key = await gateway.createKey({ scopes: ['model:request'] });
    client = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await anthropicFake?.close();
    await openaiFake?.server.close();
    await geminiFake?.close();
  });
  beforeEach(() => {
    anthropicFake.reply({ message: {} });
    openaiFake.scriptChat({ kind: 'reply', text: 'Hello from the fake.', usage: { promptTokens: 5, completionTokens: 4 } });
  });

  /** Sends a Messages request with fetch (raw bytes and headers). */
  function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify(body) });
  }

  describe('a model of another provider, translated', () => {
    test('messages.create: system, stop_sequences, max_tokens and metadata reach the provider; the answer is a message', async () => {
      // temperature and top_p are in the API reference, no longer in this SDK's types.
      const sampling = { temperature: 0.5, top_p: 0.9 } as object;
      const { data: message, response } = await client.messages
        .create({
          ...sampling,
          model: 'gpt-4o-mini',
          max_tokens: 256,
          system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
          stop_sequences: ['END'],
          metadata: { user_id: 'user-7' },
          messages: [{ role: 'user', content: 'Hi' }],
        })
        .withResponse();
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.model, 'gpt-4o-mini');
      assert.deepEqual(message.content, [{ type: 'text', text: 'Hello from the fake.' }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.deepEqual(message.usage, { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4 });
      const sent = openaiFake.server.requests.at(-1)!.json;
      assert.deepEqual(sent.messages, [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ]);
      assert.deepEqual([sent.max_completion_tokens, sent.stop, sent.temperature, sent.top_p, sent.user], [256, ['END'], 0.5, 0.9, 'user-7']);
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.equal(record.usage.prompt_tokens, 5);
      assert.equal(record.usage.completion_tokens, 4);
      assert.ok(record.cost_usd > 0, 'the call is priced');
      // cache_control is a hint Anthropic's service reads: dropped for OpenAI, and the log says so.
      assert.deepEqual(record.detail.droppedFields, ['system[0].cache_control']);
    });

    test('a stream has the documented event order, and the SDK helper assembles the message', async () => {
      openaiFake.scriptChat({ kind: 'stream', deltas: ['Hel', 'lo ', 'there'], usage: { promptTokens: 11, completionTokens: 3 } });
      const raw = await post('/v1/messages', { model: 'gpt-4o-mini', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(raw.status, 200);
      assert.match(raw.headers.get('content-type')!, /^text\/event-stream/);
      const text = await raw.text();
      assert.deepEqual(eventNames(text), ['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
      const lastDelta = JSON.parse(text.split('event: message_delta\ndata: ')[1]!.split('\n')[0]!);
      assert.deepEqual(lastDelta, {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 11, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 },
      });

      const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
      const message = await stream.finalMessage();
      assert.deepEqual(message.content, [{ type: 'text', text: 'Hello there' }]);
      assert.equal(message.usage.input_tokens, 11);
      assert.equal(message.usage.output_tokens, 3);
      const record = await loggedRecord(gateway, (await stream.withResponse()).response.headers.get('x-request-id')!);
      assert.equal(record.streaming, true);
      assert.equal(record.usage.prompt_tokens, 11);
      assert.ok(record.cost_usd > 0);
    });

    test('tool use round trip: tool_use comes back from tool_calls; tool_result goes as a tool message', async () => {
      openaiFake.scriptChat({
        kind: 'completion',
        body: {
          id: 'chatcmpl-tool',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini-2024-07-18',
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] }, finish_reason: 'tool_calls' }],
          usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
        },
      });
      const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Weather now', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
      const first = await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 100, tools, tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'Weather in Oslo?' }] });
      assert.equal(first.stop_reason, 'tool_use');
      assert.deepEqual(first.content, [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } }]);
      const sentTools = openaiFake.server.requests.at(-1)!.json;
      assert.deepEqual(sentTools.tools, [{ type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: tools[0]!.input_schema } }]);
      assert.equal(sentTools.tool_choice, 'required');

      openaiFake.scriptChat({ kind: 'reply', text: 'It is sunny in Oslo.', usage: { promptTokens: 30, completionTokens: 6 } });
      const second = await client.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        tools,
        messages: [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny, 21°C' }, { type: 'text', text: 'Thanks' }] },
        ],
      });
      assert.deepEqual(second.content, [{ type: 'text', text: 'It is sunny in Oslo.' }]);
      assert.deepEqual(openaiFake.server.requests.at(-1)!.json.messages, [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21°C' },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ]);
    });

    test('a streamed tool call: the SDK assembles tool_use input from input_json_delta', async () => {
      const chunk = (delta: unknown, finish: string | null = null) =>
        JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, finish_reason: finish }] });
      openaiFake.scriptChat({
        kind: 'frames',
        frames: [
          chunk({ role: 'assistant', content: 'Let me check.' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
          chunk({}, 'tool_calls'),
          JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } }),
          '[DONE]',
        ],
      });
      const message = await client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
      assert.equal(message.stop_reason, 'tool_use');
      assert.deepEqual(
        message.content.map((block) => (block.type === 'text' ? { type: block.type, text: block.text } : block)),
        [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'call_9', name: 'get_weather', input: { city: 'Oslo' } },
        ],
      );
    });

    test('an image block reaches the provider as an image_url data URI; the log keeps a reference, not the bytes', async () => {
      const png = Buffer.concat([Buffer.from(FAKE_PNG_BASE64, 'base64'), Buffer.alloc(6000, 7)]).toString('base64');
      const { response } = await client.messages
        .create({
          model: 'gpt-4o-mini',
          max_tokens: 50,
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'What is this?' }] }],
        })
        .withResponse();
      const view = viewOfChatRequest(openaiFake.server.requests.at(-1)!);
      assert.deepEqual(view.images, [{ mimeType: 'image/png', base64: png }]);
      assert.equal(view.credential, OPENAI_KEY);
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      const logged = JSON.stringify(record.request_payload);
      assert.match(logged, /What is this\?/);
      assert.ok(!logged.includes(png.slice(0, 200)), 'the image bytes are not in the log');
    });

    test('a tool only Anthropic runs is a 400 naming it, and nothing reaches the provider', async () => {
      const before = openaiFake.server.requests.length;
      await assert.rejects(
        client.messages.create({ model: 'gpt-4o-mini', max_tokens: 2048, tools: [{ type: 'code_execution_20250825', name: 'code_execution' }], messages: [{ role: 'user', content: 'Hi' }] }),
        (error: unknown) => error instanceof Anthropic.BadRequestError && /tools\[0\]\.type: a server tool \(code_execution_20250825\)/.test(error.message),
      );
      assert.equal(openaiFake.server.requests.length, before);
    });

    test('thinking maps to reasoning_effort for a reasoning model, and is dropped and named for one that does not reason', async () => {
      const thinking = { type: 'enabled' as const, budget_tokens: 10_000 };
      const history: Anthropic.MessageParam[] = [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'A greeting.', signature: 'gemini:c2ln' }, { type: 'text', text: 'Hello.' }] },
        { role: 'user', content: 'And?' },
      ];
      await client.messages.create({ model: 'gpt-5', max_tokens: 12_000, thinking, messages: history });
      const sent = openaiFake.server.requests.at(-1)!.json;
      assert.equal(sent.reasoning_effort, 'medium');
      // The gateway's own members never reach OpenAI: neither the extensions nor another vendor's reasoning.
      assert.deepEqual(sent.messages[1], { role: 'assistant', content: 'Hello.' });
      assert.deepEqual(Object.keys(sent).sort(), ['max_completion_tokens', 'messages', 'model', 'reasoning_effort']);
      const response = await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 12_000, thinking, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.equal(openaiFake.server.requests.at(-1)!.json.reasoning_effort, undefined);
      assert.equal(response.response.headers.get('x-modelgate-dropped'), 'thinking');
      const record = await loggedRecord(gateway, response.response.headers.get('x-request-id')!);
      assert.deepEqual(record.detail.droppedFields, ['thinking']);
    });

    test('a failure mid-stream is an error event the SDK raises', async () => {
      openaiFake.scriptChat({ kind: 'stream-error-event', deltas: ['Partial'], message: 'upstream broke' });
      const stream = client.messages.stream({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });
      await assert.rejects(stream.finalMessage(), (error: unknown) => error instanceof Anthropic.APIError);
    });

    test('a Gemini model answers through the same translation, JSON and streamed', async () => {
      const asked = { model: 'gemini-2.5-flash', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] };
      const message = await client.messages.create(asked);
      const streamed = await client.messages.stream(asked).finalMessage();
      for (const answer of [message, streamed]) {
        assert.equal(answer.model, 'gemini-2.5-flash');
        assert.equal(answer.content[0]?.type, 'text');
        assert.ok(answer.usage.output_tokens > 0);
      }
      assert.equal((message.content[0] as Anthropic.TextBlock).text, (streamed.content[0] as Anthropic.TextBlock).text);
    });

    test('count_tokens estimates for providers that cannot count', async () => {
      const counted = await client.messages.countTokens({ model: 'gpt-4o-mini', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello there, how are you?' }] });
      // (9 + 25 characters) / 4, rounded up
      assert.equal(counted.input_tokens, 9);
    });
  });

  describe('a model of Anthropic, passed through', () => {
    const cachedSystem = [{ type: 'text' as const, text: 'You are a careful assistant.', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }];

    test('the body and anthropic-beta arrive unchanged but for the model; the answer comes back as sent', async () => {
      anthropicFake.reply({ message: { content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig-abc' } as never, { type: 'text', text: 'Hi!' }], usage: { input_tokens: 100, cache_creation_input_tokens: 50, cache_read_input_tokens: 25, output_tokens: 10 } } });
      const body = {
        model: 'claude-sonnet',
        max_tokens: 2048,
        system: cachedSystem,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
      };
      const response = await post('/v1/messages', body, { 'anthropic-beta': 'context-management-2025-06-27,extended-cache-ttl-2025-04-11' });
      assert.equal(response.status, 200);
      const message = (await response.json()) as Anthropic.Message;
      const received = anthropicFake.requests.at(-1)!;
      assert.deepEqual(received.json, { ...body, model: 'claude-sonnet-4-5' });
      // Byte for byte: the caller's JSON with only the model's value changed.
      assert.equal(received.rawBody.toString('utf8'), JSON.stringify(body).replace('"model":"claude-sonnet"', '"model":"claude-sonnet-4-5"'));
      assert.equal(response.headers.get('request-id'), response.headers.get('x-request-id'));
      assert.equal(received.headers['anthropic-beta'], 'context-management-2025-06-27,extended-cache-ttl-2025-04-11');
      assert.equal(received.headers['anthropic-version'], '2023-06-01');
      assert.equal(received.headers['x-api-key'], FAKE_ANTHROPIC_KEY);
      assert.equal(message.model, 'claude-sonnet');
      assert.deepEqual(message.content, [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig-abc' }, { type: 'text', text: 'Hi!' }]);
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.equal(record.usage.prompt_tokens, 175);
      assert.equal(record.usage.cached_tokens, 25);
      assert.ok(record.cost_usd > 0);
    });

    test('a stream passes through event by event; the SDK helper gets thinking, its signature and the usage', async () => {
      const message = messageBody({ model: 'claude-sonnet-4-5', content: [{ type: 'thinking', thinking: 'Let me think.', signature: 'sig-xyz' } as never, { type: 'text', text: 'Answer.' }], usage: { input_tokens: 40, output_tokens: 12 } });
      anthropicFake.reply({ stream: streamFramesOf(message) });
      const stream = client.messages.stream(
        { model: 'claude-sonnet', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, system: cachedSystem, messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } },
      );
      const final = await stream.finalMessage();
      assert.equal(final.model, 'claude-sonnet');
      assert.deepEqual(final.content[0], { type: 'thinking', thinking: 'Let me think.', signature: 'sig-xyz' });
      assert.equal(final.usage.output_tokens, 12);
      assert.equal(anthropicFake.requests.at(-1)!.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
      assert.deepEqual(anthropicFake.lastBody().system, cachedSystem);
      const { response } = await stream.withResponse();
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.equal(record.streaming, true);
      assert.equal(record.usage.prompt_tokens, 40);
      assert.equal(record.usage.completion_tokens, 12);
      assert.ok(record.cost_usd > 0);
    });

    test("a provider's error event mid-stream reaches the SDK as an error", async () => {
      const frames = streamFramesOf(messageBody({ model: 'claude-sonnet-4-5' }));
      anthropicFake.reply({ stream: [...frames.slice(0, 4), OVERLOADED_FRAME] });
      const raw = await post('/v1/messages', { model: 'claude-sonnet', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
      const text = await raw.text();
      assert.deepEqual(eventNames(text).slice(-1), ['error']);
      const error = JSON.parse(text.split('event: error\ndata: ')[1]!.split('\n')[0]!);
      assert.equal(error.type, 'error');
      assert.equal(error.error.type, 'api_error');
    });

    test("the provider's refusal of a request comes back as a BadRequestError with its reason", async () => {
      anthropicFake.reply({ error: 'invalid_request_error', message: 'messages.0.content.0.thinking.signature: Field required' });
      await assert.rejects(
        client.messages.create({ model: 'claude-sonnet', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
        (error: unknown) => error instanceof Anthropic.BadRequestError && /signature: Field required/.test(error.message),
      );
    });

    test('count_tokens asks the provider', async () => {
      const body = { model: 'claude-sonnet', system: cachedSystem, messages: [{ role: 'user' as const, content: 'Count me' }] };
      const counted = await client.messages.countTokens(body);
      assert.equal(anthropicFake.requests.at(-1)!.path, '/v1/messages/count_tokens');
      assert.equal(counted.input_tokens, fakeTokenCount({ ...body, model: 'claude-sonnet-4-5' }));
    });
  });

  describe('errors in Anthropic shape', () => {
    test('a bad key is the SDK AuthenticationError, with request-id', async () => {
      const stranger = new Anthropic({ baseURL: gateway.url, apiKey: 'sk-mg-not-a-key', maxRetries: 0 });
      await assert.rejects(stranger.messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }), (error: unknown) => {
        assert.ok(error instanceof Anthropic.AuthenticationError);
        assert.match(error.requestID ?? '', /^req_/);
        return true;
      });
      const raw = await post('/v1/messages', { model: 'gpt-4o-mini', max_tokens: 10, messages: [] }, { 'x-api-key': 'sk-mg-not-a-key' });
      const body = (await raw.json()) as { type: string; error: { type: string } };
      assert.equal(raw.status, 401);
      assert.equal(raw.headers.get('request-id'), raw.headers.get('x-request-id'));
      assert.deepEqual(Object.keys(body), ['type', 'error', 'request_id']);
      assert.equal(body.error.type, 'authentication_error');
    });

    test("a model outside the key's allowedModels is a PermissionDeniedError, for messages and count_tokens alike", async () => {
      const limited = new Anthropic({ baseURL: gateway.url, apiKey: await gateway.createKey({ scopes: ['model:request'], allowedModels: ['gpt-4o-mini'] }), maxRetries: 0 });
      const before = anthropicFake.requests.length;
      const body = { model: 'claude-sonnet', messages: [{ role: 'user' as const, content: 'Hi' }] };
      await assert.rejects(limited.messages.create({ ...body, max_tokens: 10 }), Anthropic.PermissionDeniedError);
      await assert.rejects(limited.messages.countTokens(body), Anthropic.PermissionDeniedError);
      assert.equal(anthropicFake.requests.length, before);
    });

    test('the key in Authorization: Bearer works too', async () => {
      const bearer = new Anthropic({ baseURL: gateway.url, authToken: key, apiKey: null, maxRetries: 0 });
      const message = await bearer.messages.create({ model: 'gpt-4o-mini', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(message.type, 'message');
    });

    test('the input policy of every model call holds here too, before anything reaches a provider', async () => {
      const before = [openaiFake.server.requests.length, anthropicFake.requests.length];
      const withImage = (model: string, url: string) =>
        client.messages.create({ model, max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url } }, { type: 'text', text: 'What is it?' }] }] });
      for (const model of ['gpt-4o-mini', 'claude-sonnet']) {
        await assert.rejects(withImage(model, 'https://user:password@images.example.com/cat.png'), (error: unknown) => {
          assert.ok(error instanceof Anthropic.BadRequestError);
          assert.match(error.message, /must not contain a username or password/);
          assert.doesNotMatch(error.message, /user:password/);
          return true;
        });
      }
      await assert.rejects(withImage('o3-mini', 'https://images.example.com/cat.png'), (error: unknown) => error instanceof Anthropic.BadRequestError && /does not accept images/.test(error.message));
      await assert.rejects(
        client.messages.create({ model: 'text-embedding-3-small', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }),
        (error: unknown) => error instanceof Anthropic.BadRequestError && /cannot be used on this endpoint|chat model/.test(error.message),
      );
      assert.deepEqual([openaiFake.server.requests.length, anthropicFake.requests.length], before);
    });

    test('a bad body is a BadRequestError that says what to fix', async () => {
      await assert.rejects(
        client.messages.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } as never),
        (error: unknown) => error instanceof Anthropic.BadRequestError && /max_tokens is required/.test(error.message),
      );
      await assert.rejects(
        client.messages.create({ model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }),
        (error: unknown) => error instanceof Anthropic.BadRequestError && /no-such-model/.test(error.message),
      );
    });
  });
});
