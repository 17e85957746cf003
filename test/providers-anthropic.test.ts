import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { GatewayError } from '../src/errors/index.js';
import { createAnthropicProvider, DEFAULT_MAX_TOKENS } from '../src/providers/anthropic/index.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from '../src/providers/shared/upstream-http.js';
import type { ChatCall, ChatModelProvider, ChatStreamEvent, JsonObject } from '../src/model-api/index.js';
import {
  FAKE_ANTHROPIC_KEY,
  OVERLOADED_FRAME,
  messageBody,
  startAnthropicConformanceFake,
  startFakeAnthropic,
  streamFramesOf,
  type FakeAnthropic,
} from './fakes/anthropic.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventsOf, readChatStream } from './helpers/chat-streams.js';
import { openaiClient, PDF_BASE64, PNG_BASE64, runProviderConformance } from './providers/conformance.js';

/*
 * The Anthropic adapter against the fake Messages API: first called directly (what reaches
 * the fake for each OpenAI-shaped request, how each documented answer comes back), then
 * through a real gateway with the official openai SDK: the shared conformance suite and
 * the Anthropic-specific translations (tools, response_format, cached tokens, refusals).
 */

runProviderConformance({
  name: 'anthropic',
  startFake: startAnthropicConformanceFake,
  gateway: (url) => ({ env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY } }),
  chatModel: 'claude-sonnet-4-5',
  upstreamKey: FAKE_ANTHROPIC_KEY,
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'model: claude-sonnet-4-5',
  providerRequestId: /^req_01\w+$/,
  providerRequestIdOnError: true,
  takesClientRequestId: false,
  capabilityModels: {},
  skip: {
    embeddings: 'Anthropic offers no embeddings API',
    images: 'Anthropic offers no image generation API',
    speech: 'Anthropic offers no text-to-speech API',
    transcription: 'Anthropic offers no transcription API',
  },
});

function httpOptions(timeoutMs: number): UpstreamHttpOptions {
  return {
    dispatcher: createUpstreamDispatcher({ connectionsPerOrigin: 4, timeoutMs, streamIdleTimeoutMs: timeoutMs }),
    timeoutMs,
    streamIdleTimeoutMs: timeoutMs,
  };
}

function callOf(body: JsonObject, signal: AbortSignal = new AbortController().signal): ChatCall {
  return { upstreamModel: 'claude-sonnet-4-5', body, signal, requestId: 'req-test' };
}

function chunksOf(events: ChatStreamEvent[]): Loose[] {
  return events.flatMap((event) => (event.type === 'chunk-received' ? [event.chunk] : []));
}

function contentOf(events: ChatStreamEvent[]): string {
  return chunksOf(events)
    .map((chunk) => chunk.choices[0].delta.content ?? '')
    .join('');
}

function isGatewayError(code: string, status: number) {
  return (error: unknown) => {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return true;
  };
}

/** Chunks and choices are read loosely: the assertions check their exact shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const userSays = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** The start of a JPEG (SOI, JFIF APP0) and its end: what the signature checks read. */
const JPEG_BASE64 = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9]).toString('base64');

describe('anthropic adapter', () => {
  let fake: FakeAnthropic;
  let chat: ChatModelProvider;

  before(async () => {
    fake = await startFakeAnthropic();
    const provider = createAnthropicProvider({ name: 'anthropic', baseUrl: `${fake.url}/`, apiKey: FAKE_ANTHROPIC_KEY, http: httpOptions(10_000) });
    assert.equal(provider.acceptsRemoteImageUrls, true);
    assert.equal(provider.embeddings ?? provider.images ?? provider.speech ?? provider.transcription, undefined, 'Anthropic serves chat only');
    chat = provider.chat!;
  });
  after(() => fake.close());
  beforeEach(() => fake.reply({ message: {} }));

  describe('request mapping', () => {
    test('headers, model, default max_tokens, sampling fields and stop → stop_sequences', async () => {
      await chat.complete(callOf({ ...userSays('Hi'), temperature: 0.3, top_p: 0.9, stop: 'END', user: 'user-42', seed: 7 }));
      const request = fake.requests.at(-1)!;
      assert.equal(request.path, '/v1/messages');
      assert.equal(request.headers['x-api-key'], FAKE_ANTHROPIC_KEY);
      assert.equal(request.headers['anthropic-version'], '2023-06-01');
      assert.match(String(request.headers['content-type']), /^application\/json/);
      assert.deepEqual(request.json, {
        model: 'claude-sonnet-4-5',
        max_tokens: DEFAULT_MAX_TOKENS,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        temperature: 0.3,
        top_p: 0.9,
        stop_sequences: ['END'],
        metadata: { user_id: 'user-42' },
      });
    });

    test('max_completion_tokens wins over max_tokens; stop arrays pass as they are', async () => {
      await chat.complete(callOf({ ...userSays('Hi'), max_tokens: 100, max_completion_tokens: 200, stop: ['a', 'b'] }));
      assert.equal(fake.lastBody().max_tokens, 200);
      assert.deepEqual(fake.lastBody().stop_sequences, ['a', 'b']);
      await chat.complete(callOf({ ...userSays('Hi'), max_tokens: 100 }));
      assert.equal(fake.lastBody().max_tokens, 100);
    });

    test('every system and developer message joins the top-level system; same-role turns merge', async () => {
      await chat.complete(
        callOf({
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'First' },
            { role: 'user', content: [{ type: 'text', text: 'Second' }] },
            { role: 'developer', content: [{ type: 'text', text: 'Use British spelling.' }] },
            { role: 'assistant', content: 'Answer' },
            { role: 'assistant', content: '' },
            { role: 'user', content: 'Third' },
          ],
        }),
      );
      const body = fake.lastBody();
      assert.equal(body.system, 'Be brief.\n\nUse British spelling.');
      assert.deepEqual(body.messages, [
        { role: 'user', content: [{ type: 'text', text: 'First' }, { type: 'text', text: 'Second' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'Third' }] },
      ]);
    });

    test('a conversation opening with the assistant (a chat UI greeting) is sent as it is: Anthropic takes it', async () => {
      await chat.complete(
        callOf({
          messages: [
            { role: 'system', content: 'You are a support agent.' },
            { role: 'assistant', content: 'Hi! How can I help you today?' },
            { role: 'user', content: 'My order is late.' },
          ],
        }),
      );
      const body = fake.lastBody();
      assert.equal(body.system, 'You are a support agent.');
      assert.deepEqual(body.messages, [
        { role: 'assistant', content: [{ type: 'text', text: 'Hi! How can I help you today?' }] },
        { role: 'user', content: [{ type: 'text', text: 'My order is late.' }] },
      ]);
    });

    test('n > 1 and logprobs are refused before any upstream call', async () => {
      const before = fake.requests.length;
      await assert.rejects(chat.complete(callOf({ ...userSays('Hi'), n: 2 })), isGatewayError('unsupported_field', 400));
      await assert.rejects(chat.complete(callOf({ ...userSays('Hi'), logprobs: true })), isGatewayError('unsupported_field', 400));
      assert.equal(fake.requests.length, before);
    });
  });

  describe('multimodal', () => {
    test('a data-URI image becomes a base64 image block and a remote URL an url image block', async () => {
      await chat.complete(
        callOf({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Compare' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'high' } },
                { type: 'image_url', image_url: { url: 'https://images.example/cat.jpg' } },
              ],
            },
          ],
        }),
      );
      assert.deepEqual(fake.lastBody().messages[0].content, [
        { type: 'text', text: 'Compare' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        { type: 'image', source: { type: 'url', url: 'https://images.example/cat.jpg' } },
      ]);
    });

    test('an image labelled image/jpg (or with another accepted type than its bytes) is sent as the type its bytes are', async () => {
      const imagePart = (url: string) => ({ type: 'image_url', image_url: { url } });
      await chat.complete(
        callOf({
          messages: [
            {
              role: 'user',
              content: [
                imagePart(`data:image/jpg;base64,${JPEG_BASE64}`),
                imagePart(`data:IMAGE/JPG;base64,${JPEG_BASE64}`),
                imagePart(`data:image/png;base64,${JPEG_BASE64}`),
                imagePart(`data:image/jpeg;base64,${PNG_BASE64}`),
                { type: 'text', text: 'Which is sharper?' },
              ],
            },
          ],
        }),
      );
      const types = (fake.lastBody().messages[0].content as Loose[]).flatMap((block) => (block.type === 'image' ? [block.source.media_type] : []));
      assert.deepEqual(types, ['image/jpeg', 'image/jpeg', 'image/jpeg', 'image/png']);
    });

    test('a PDF file part becomes a base64 document block (data URI or raw base64 with its type)', async () => {
      await chat.complete(
        callOf({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF_BASE64}` } },
                { type: 'input_file', file: { filename: 'b.pdf', mime_type: 'application/pdf', file_data: PDF_BASE64 } },
                { type: 'file', file: { filename: 'notes.txt', file_data: `data:text/plain;base64,${Buffer.from('plain notes').toString('base64')}` } },
                { type: 'text', text: 'Summarise' },
              ],
            },
          ],
        }),
      );
      const document = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } };
      assert.deepEqual(fake.lastBody().messages[0].content, [
        document,
        document,
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
        { type: 'text', text: 'Summarise' },
      ]);
    });

    test('unusable images and files are refused with a 400 naming the part', async () => {
      const before = fake.requests.length;
      const ask = (part: JsonObject) => chat.complete(callOf({ messages: [{ role: 'user', content: [part] }] }));
      const refusals: [JsonObject, string][] = [
        [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }, 'invalid_image_url'],
        [{ type: 'image_url', image_url: { url: 'https://user:pw@images.example/cat.png' } }, 'invalid_image_url'],
        [{ type: 'image_url', image_url: { url: 'ftp://images.example/cat.png' } }, 'invalid_image_url'],
        [{ type: 'file', file: { file_data: 'https://files.example/doc.pdf' } }, 'invalid_body'],
        [{ type: 'file', file: { file_id: 'file-abc' } }, 'invalid_body'],
        [{ type: 'file', file: { filename: 'sheet.xlsx', file_data: 'UEsDBA==' } }, 'unsupported_input_modality'],
        [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }, 'unsupported_input_modality'],
      ];
      for (const [part, code] of refusals) {
        await assert.rejects(ask(part), (error: unknown) => {
          assert.ok(error instanceof GatewayError);
          assert.equal(error.code, code, JSON.stringify(part));
          assert.ok(error.param?.startsWith('messages[0].content[0]'), `param ${error.param}`);
          assert.ok(!error.message.includes('pw@'), 'credentials are not echoed');
          return true;
        });
      }
      assert.equal(fake.requests.length, before, 'refused requests never reach the provider');
    });
  });

  describe('tools', () => {
    const weatherTool = {
      type: 'function',
      function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    };

    test('function tools become tools with input_schema; tool_choice maps to auto/none/any/tool', async () => {
      const cases: [unknown, unknown][] = [
        [undefined, undefined],
        ['auto', undefined],
        ['none', { type: 'none' }],
        ['required', { type: 'any' }],
        [{ type: 'function', function: { name: 'get_weather' } }, { type: 'tool', name: 'get_weather' }],
      ];
      for (const [toolChoice, expected] of cases) {
        await chat.complete(callOf({ ...userSays('Weather?'), tools: [weatherTool], ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}) }));
        const body = fake.lastBody();
        assert.deepEqual(body.tools, [
          { name: 'get_weather', description: 'Weather by city', input_schema: weatherTool.function.parameters },
        ]);
        assert.deepEqual(body.tool_choice, expected, `tool_choice ${JSON.stringify(toolChoice)}`);
      }
      await chat.complete(callOf({ ...userSays('Weather?'), tools: [weatherTool], parallel_tool_calls: false }));
      assert.deepEqual(fake.lastBody().tool_choice, { type: 'auto', disable_parallel_tool_use: true });
    });

    test('tool_use in the answer becomes tool_calls with JSON-string arguments', async () => {
      fake.reply({
        message: {
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Rome' } },
          ],
          stop_reason: 'tool_use',
        },
      });
      const { completion } = await chat.complete(callOf({ ...userSays('Weather in Paris and Rome?'), tools: [weatherTool] }));
      const choice = (completion.choices as Loose[])[0];
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, 'Let me check.');
      assert.deepEqual(choice.message.tool_calls, [
        { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      ]);
    });

    test('assistant tool_calls and tool messages in history become tool_use and tool_result blocks', async () => {
      await chat.complete(
        callOf({
          tools: [weatherTool],
          messages: [
            { role: 'user', content: 'Weather in Paris and Rome?' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
                { id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
              ],
            },
            { role: 'tool', tool_call_id: 'toolu_01A', content: '18°C' },
            { role: 'tool', tool_call_id: 'toolu_01B', content: [{ type: 'text', text: '24°C' }] },
            { role: 'user', content: 'Which is warmer?' },
          ],
        }),
      );
      assert.deepEqual(fake.lastBody().messages, [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: '18°C' },
            { type: 'tool_result', tool_use_id: 'toolu_01B', content: '24°C' },
            { type: 'text', text: 'Which is warmer?' },
          ],
        },
      ]);
    });

    test('tool call arguments that are not JSON are a 400 naming the field', async () => {
      await assert.rejects(
        chat.complete(
          callOf({
            messages: [
              { role: 'user', content: 'Hi' },
              { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
            ],
          }),
        ),
        (error: unknown) => error instanceof GatewayError && error.param === 'messages[1].tool_calls[0].function.arguments',
      );
    });
  });

  describe('response_format', () => {
    const verdictFormat = {
      type: 'json_schema',
      json_schema: {
        name: 'vetting_verdict',
        strict: true,
        schema: { type: 'object', properties: { passed: { type: 'boolean' }, reason: { type: 'string' } }, required: ['passed', 'reason'] },
      },
    };
    const verdict = { passed: true, reason: 'Accurate and on topic.' };

    test('json_schema → a forced tool; its input comes back as the content with finish_reason stop', async () => {
      fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01V', name: 'vetting_verdict', input: verdict }], stop_reason: 'tool_use' } });
      const { completion } = await chat.complete(callOf({ ...userSays('Check this draft'), response_format: verdictFormat }));
      const body = fake.lastBody();
      assert.deepEqual(body.tool_choice, { type: 'tool', name: 'vetting_verdict' });
      assert.equal(body.tools.length, 1);
      assert.equal(body.tools[0].name, 'vetting_verdict');
      assert.deepEqual(body.tools[0].input_schema, verdictFormat.json_schema.schema);
      assert.equal(body.tools[0].strict, true, 'a strict schema is enforced by strict tool use');
      const choice = (completion.choices as Loose[])[0];
      assert.equal(choice.finish_reason, 'stop');
      assert.deepEqual(JSON.parse(choice.message.content), verdict);
      assert.equal(choice.message.tool_calls, undefined);
    });

    test('strict only where asked: a lax schema and a lax function tool stay lax, a strict function tool is strict', async () => {
      fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01W', name: 'lax', input: verdict }], stop_reason: 'tool_use' } });
      const laxFormat = { type: 'json_schema', json_schema: { ...verdictFormat.json_schema, name: 'lax', strict: false } };
      const tools = [
        { type: 'function', function: { name: 'strict_lookup', strict: true, parameters: { type: 'object', properties: {}, additionalProperties: false } } },
        { type: 'function', function: { name: 'lax_lookup', parameters: { type: 'object', properties: {} } } },
      ];
      await chat.complete(callOf({ ...userSays('Check this draft'), response_format: laxFormat, tools }));
      const sent = fake.lastBody().tools as Loose[];
      assert.deepEqual(sent.map((tool) => [tool.name, tool.strict]), [['strict_lookup', true], ['lax_lookup', undefined], ['lax', undefined]]);
    });

    test('streamed: the forced tool input streams as content deltas, finish_reason stop', async () => {
      fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01V', name: 'vetting_verdict', input: verdict }], stop_reason: 'tool_use' } });
      const stream = await chat.stream(callOf({ ...userSays('Check this draft'), response_format: verdictFormat }));
      const events = await eventsOf(stream);
      assert.deepEqual(JSON.parse(contentOf(events)), verdict);
      assert.ok(chunksOf(events).every((chunk) => chunk.choices[0].delta.tool_calls === undefined));
      assert.equal(chunksOf(events).at(-1).choices[0].finish_reason, 'stop');
    });

    test('json_object → a forced tool taking any object', async () => {
      fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01J', name: 'json_object', input: { a: 1 } }], stop_reason: 'tool_use' } });
      const { completion } = await chat.complete(callOf({ ...userSays('JSON please'), response_format: { type: 'json_object' } }));
      assert.deepEqual(fake.lastBody().tool_choice, { type: 'tool', name: 'json_object' });
      assert.equal((completion.choices as Loose[])[0].message.content, '{"a":1}');
    });
  });

  describe('answers', () => {
    test('a text message becomes a chat.completion with the upstream model and usage', async () => {
      fake.reply({ message: { id: 'msg_01XYZ', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'Bonjour' }] } });
      const { completion, usage } = await chat.complete(callOf(userSays('Say hello in French')));
      assert.equal(completion.id, 'msg_01XYZ');
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.model, 'claude-sonnet-4-5-20250929');
      assert.equal(typeof completion.created, 'number');
      assert.deepEqual(completion.choices, [
        { index: 0, message: { role: 'assistant', content: 'Bonjour', refusal: null }, logprobs: null, finish_reason: 'stop' },
      ]);
      assert.deepEqual(usage, { promptTokens: 12, completionTokens: 9, totalTokens: 21, cachedPromptTokens: 0, cacheWritePromptTokens: 0, cacheWrite1hPromptTokens: null });
    });

    test('stop reasons: end_turn/stop_sequence/pause_turn → stop, max_tokens/model_context_window_exceeded → length, refusal → content_filter', async () => {
      const expectations: [string, string][] = [
        ['end_turn', 'stop'],
        ['stop_sequence', 'stop'],
        ['pause_turn', 'stop'],
        ['max_tokens', 'length'],
        ['model_context_window_exceeded', 'length'],
        ['refusal', 'content_filter'],
      ];
      for (const [stopReason, finishReason] of expectations) {
        fake.reply({ message: { stop_reason: stopReason as 'end_turn' } });
        const { completion } = await chat.complete(callOf(userSays('Hi')));
        assert.equal((completion.choices as Loose[])[0].finish_reason, finishReason, stopReason);
      }
    });

    test('cache reads and writes count as prompt tokens; cache reads are the cached tokens, writes kept apart', async () => {
      fake.reply({ message: { usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 5 } } });
      const { completion, usage } = await chat.complete(callOf(userSays('Hi')));
      // The writes are kept apart too: they are priced apart.
      assert.deepEqual(usage, { promptTokens: 130, completionTokens: 5, totalTokens: 135, cachedPromptTokens: 100, cacheWritePromptTokens: 20, cacheWrite1hPromptTokens: null });
      assert.deepEqual(completion.usage, { prompt_tokens: 130, completion_tokens: 5, total_tokens: 135, prompt_tokens_details: { cached_tokens: 100 } });
    });

    test('a 200 body that is not a message is a provider_error', async () => {
      fake.reply({ malformedBody: '{"unexpected": true}' });
      await assert.rejects(chat.complete(callOf(userSays('Hi'))), isGatewayError('provider_error', 502));
      fake.reply({ malformedBody: 'not json' });
      await assert.rejects(chat.complete(callOf(userSays('Hi'))), isGatewayError('provider_error', 502));
    });
  });

  describe('streaming', () => {
    test('text deltas become chunks: role first, then content, then finish_reason; one combined usage report', async () => {
      fake.reply({
        message: {
          id: 'msg_01S',
          content: [{ type: 'text', text: 'Hello there, friend.' }],
          usage: { input_tokens: 20, cache_read_input_tokens: 30, cache_creation_input_tokens: 0, output_tokens: 6 },
        },
      });
      const stream = await chat.stream(callOf(userSays('Greet me')));
      const events = await eventsOf(stream);
      assert.equal(fake.lastBody().stream, true);
      const chunks = chunksOf(events);
      assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
      for (const chunk of chunks) {
        assert.equal(chunk.id, 'msg_01S');
        assert.equal(chunk.object, 'chat.completion.chunk');
      }
      assert.ok(chunks.slice(1).every((chunk) => chunk.choices[0].delta.role === undefined));
      assert.equal(contentOf(events), 'Hello there, friend.');
      assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
      // The prompt's count as message_start gave it, before the first chunk; then the whole usage once message_delta came.
      const usages = events.filter((event) => event.type === 'usage-reported') as Extract<ChatStreamEvent, { type: 'usage-reported' }>[];
      assert.equal(usages.length, 2);
      assert.equal(events[0]!.type, 'usage-reported');
      assert.equal(usages[0]!.usage.promptTokens, 50);
      const reported = usages[1];
      assert.deepEqual(reported!.usage, { promptTokens: 50, completionTokens: 6, totalTokens: 56, cachedPromptTokens: 30, cacheWritePromptTokens: 0, cacheWrite1hPromptTokens: null });
      assert.deepEqual(reported!.chunk, {
        id: 'msg_01S',
        object: 'chat.completion.chunk',
        created: chunks[0].created,
        model: chunks[0].model,
        choices: [],
        usage: { prompt_tokens: 50, completion_tokens: 6, total_tokens: 56, prompt_tokens_details: { cached_tokens: 30 } },
      });
      assert.ok(!events.some((event) => event.type === 'stream-failed'));
    });

    test('tool_use blocks stream as tool_calls deltas with their index, id and name', async () => {
      fake.reply({
        message: {
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: { zone: 'CET' } },
          ],
          stop_reason: 'tool_use',
        },
      });
      const events = await eventsOf(await chat.stream(callOf(userSays('Weather and time?'))));
      const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
      for (const chunk of chunksOf(events)) {
        for (const delta of chunk.choices[0].delta.tool_calls ?? []) {
          const call = calls.get(delta.index) ?? { arguments: '' };
          if (delta.id !== undefined) Object.assign(call, { id: delta.id, name: delta.function.name });
          call.arguments += delta.function.arguments ?? '';
          calls.set(delta.index, call);
        }
      }
      assert.deepEqual([...calls.entries()], [
        [0, { id: 'toolu_01A', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        [1, { id: 'toolu_01B', name: 'get_time', arguments: '{"zone":"CET"}' }],
      ]);
      assert.equal(contentOf(events), 'Checking.');
      assert.equal(chunksOf(events).at(-1).choices[0].finish_reason, 'tool_calls');
    });

    test('a tool called without arguments streams "{}" as its arguments, as the answer without streaming has', async () => {
      fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01E', name: 'current_time', input: {} }], stop_reason: 'tool_use' } });
      const events = await eventsOf(await chat.stream(callOf(userSays('What time is it?'))));
      const argumentsText = chunksOf(events)
        .flatMap((chunk) => chunk.choices[0].delta.tool_calls ?? [])
        .map((delta: Loose) => delta.function.arguments ?? '')
        .join('');
      assert.equal(argumentsText, '{}');
      const { completion } = await chat.complete(callOf(userSays('What time is it?')));
      assert.equal((completion.choices as Loose[])[0].message.tool_calls[0].function.arguments, '{}');
    });

    test('a forced response_format tool with an empty input streams "{}" as the content', async () => {
      fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01F', name: 'json_object', input: {} }], stop_reason: 'tool_use' } });
      const events = await eventsOf(await chat.stream(callOf({ ...userSays('JSON please'), response_format: { type: 'json_object' } })));
      assert.equal(contentOf(events), '{}');
    });

    test('an error event inside the 200 stream ends it with stream-failed after the usage known so far', async () => {
      const frames = streamFramesOf(messageBody({ content: [{ type: 'text', text: 'Partial answer' }], usage: { input_tokens: 15 } }));
      const beforeEnd = frames.findIndex(([event]) => event === 'content_block_stop');
      fake.reply({ stream: [...frames.slice(0, beforeEnd), OVERLOADED_FRAME] });
      const events = await eventsOf(await chat.stream(callOf(userSays('Hi'))));
      assert.equal(contentOf(events), 'Partial answer');
      const [usage, failure] = events.slice(-2);
      assert.deepEqual(usage, { type: 'usage-reported', usage: { promptTokens: 15, completionTokens: 1, totalTokens: 16, cachedPromptTokens: 0, cacheWritePromptTokens: 0, cacheWrite1hPromptTokens: null } });
      assert.equal(failure?.type, 'stream-failed');
      assert.match((failure as { message: string }).message, /overloaded/);
      assert.equal((failure as { logDetail?: Record<string, unknown> }).logDetail?.upstreamType, 'overloaded_error');
    });

    test('an error event as the first frame rejects stream() with a status', async () => {
      fake.reply({ stream: [OVERLOADED_FRAME] });
      await assert.rejects(chat.stream(callOf(userSays('Hi'))), isGatewayError('provider_error', 502));
    });

    test('a stream cut before message_stop ends with stream-failed, never silence', async () => {
      const frames = streamFramesOf(messageBody({ content: [{ type: 'text', text: 'Cut short' }] }));
      fake.reply({ stream: frames.slice(0, -2), end: 'drop' });
      const events = await eventsOf(await chat.stream(callOf(userSays('Hi'))));
      assert.equal(contentOf(events), 'Cut short');
      assert.equal(events.at(-1)?.type, 'stream-failed');

      fake.reply({ stream: frames.slice(0, -1) });
      const cleanlyClosed = await eventsOf(await chat.stream(callOf(userSays('Hi'))));
      assert.equal(cleanlyClosed.at(-1)?.type, 'stream-failed', 'a body that ends without message_stop is truncated too');
      assert.equal(cleanlyClosed.filter((event) => event.type === 'usage-reported').length, 2, 'usage reported at the start and with message_delta');
    });

    test('a malformed frame ends the stream with stream-failed', async () => {
      const frames = streamFramesOf(messageBody());
      fake.reply({ stream: [frames[0]!, ['content_block_delta', { type: 'content_block_delta', delta: 'not an object' }]] });
      const events = await eventsOf(await chat.stream(callOf(userSays('Hi'))));
      assert.equal(events.at(-1)?.type, 'stream-failed');
    });

    test('aborting the call closes the upstream connection', async () => {
      let closed!: () => void;
      const upstreamClosed = new Promise<void>((resolve) => (closed = resolve));
      fake.reply({ stream: streamFramesOf(messageBody()).slice(0, 3), end: 'hang', onClose: () => closed() });
      const controller = new AbortController();
      const reading = readChatStream(await chat.stream(callOf(userSays('Hi'), controller.signal)));
      assert.ok(reading.events.length > 0, 'the first events come with the stream');
      controller.abort();
      await upstreamClosed;
      assert.equal((await reading.ended).at(-1)?.type, 'stream-failed');
    });
  });

  describe('upstream failures', () => {
    test('401 authentication_error → neutral 502; Anthropic\'s status and message only in logDetail', async () => {
      fake.reply({ error: 'authentication_error', message: 'invalid x-api-key' });
      for (const attempt of [() => chat.complete(callOf(userSays('Hi'))), () => chat.stream(callOf(userSays('Hi')))]) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof GatewayError);
          assert.equal(error.status, 502);
          assert.equal(error.code, 'provider_error');
          assert.ok(!error.message.includes('x-api-key') && !error.message.includes('401'));
          assert.deepEqual(error.detail(), { provider: 'anthropic', upstreamStatus: 401, upstreamMessage: 'invalid x-api-key', fault: 'credential_refused' });
          return true;
        });
      }
    });

    test('the key the gateway holds is the one sent: a wrong key is refused by the fake', async () => {
      const provider = createAnthropicProvider({ name: 'anthropic', baseUrl: fake.url, apiKey: 'fake-anthropic-wrong-key', http: httpOptions(10_000) });
      await assert.rejects(provider.chat!.complete(callOf(userSays('Hi'))), isGatewayError('provider_error', 502));
    });

    test('400 invalid_request_error → 400 invalid_body with Anthropic\'s message', async () => {
      fake.reply({ error: 'invalid_request_error', message: 'max_tokens: 999999 > 64000, which is the maximum allowed' });
      await assert.rejects(chat.complete(callOf(userSays('Hi'))), (error: unknown) => {
        assert.ok(error instanceof GatewayError);
        assert.equal(error.code, 'invalid_body');
        assert.match(error.message, /max_tokens: 999999 > 64000/);
        return true;
      });
    });

    test('403 → 502, 429 → 429 with Retry-After, 500 and 529 overloaded → 502', async () => {
      fake.reply({ error: 'permission_error' });
      await assert.rejects(chat.complete(callOf(userSays('Hi'))), isGatewayError('provider_error', 502));
      fake.reply({ error: 'rate_limit_error', retryAfter: 17 });
      await assert.rejects(chat.complete(callOf(userSays('Hi'))), (error: unknown) => {
        assert.ok(error instanceof GatewayError);
        assert.equal(error.code, 'provider_rate_limited');
        assert.equal(error.retryAfterSeconds, 17);
        return true;
      });
      for (const type of ['api_error', 'overloaded_error'] as const) {
        fake.reply({ error: type });
        await assert.rejects(chat.stream(callOf(userSays('Hi'))), isGatewayError('provider_error', 502));
      }
    });

    test('402 billing_error (the gateway\'s own account) → neutral 502, never the caller\'s 400; 504 timeout_error → 504', async () => {
      fake.reply({ error: 'billing_error' });
      for (const attempt of [() => chat.complete(callOf(userSays('Hi'))), () => chat.stream(callOf(userSays('Hi')))]) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof GatewayError);
          assert.equal(error.status, 502);
          assert.equal(error.code, 'provider_error');
          assert.doesNotMatch(error.message, /credit|billing|402/i);
          assert.equal(error.upstream?.status, 402);
          assert.match(String(error.upstream?.message), /credit balance is too low/);
          return true;
        });
      }
      fake.reply({ error: 'timeout_error' });
      await assert.rejects(chat.complete(callOf(userSays('Hi'))), isGatewayError('provider_timeout', 504));
    });

    test('no response headers within the timeout → 504 provider_timeout', async () => {
      const provider = createAnthropicProvider({ name: 'anthropic', baseUrl: fake.url, apiKey: FAKE_ANTHROPIC_KEY, http: httpOptions(200) });
      fake.reply({ delayMs: 5_000 });
      await assert.rejects(provider.chat!.complete(callOf(userSays('Hi'))), isGatewayError('provider_timeout', 504));
      await assert.rejects(provider.chat!.stream(callOf(userSays('Hi'))), isGatewayError('provider_timeout', 504));
    });

    test('a stream that goes silent after its first frames → stream-failed (timeout), never a hang', async () => {
      const provider = createAnthropicProvider({ name: 'anthropic', baseUrl: fake.url, apiKey: FAKE_ANTHROPIC_KEY, http: httpOptions(200) });
      fake.reply({ stream: streamFramesOf(messageBody()).slice(0, 4), end: 'hang' });
      const events = await eventsOf(await provider.chat!.stream(callOf(userSays('Hi'))));
      const failure = events.at(-1);
      assert.equal(failure?.type, 'stream-failed');
      assert.match((failure as { message: string }).message, /stopped sending/);
    });
  });
});

describe('anthropic through the gateway (openai SDK)', () => {
  const model = 'claude-sonnet-4-5';
  let fake: FakeAnthropic;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeAnthropic();
    gateway = await startTestGateway({ env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY } });
    client = openaiClient(gateway.url, await gateway.createKey({ scopes: ['model:request'] }));
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });
  beforeEach(() => fake.reply({ message: {} }));

  const weatherTool: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  };

  test('cache writes are priced as Anthropic bills them (5-minute 1.25×, 1-hour 2× input), streamed or not', async () => {
    fake.reply({
      message: {
        usage: {
          input_tokens: 1_000,
          cache_read_input_tokens: 2_000,
          cache_creation_input_tokens: 3_000,
          cache_creation: { ephemeral_5m_input_tokens: 2_000, ephemeral_1h_input_tokens: 1_000 },
          output_tokens: 500,
        },
      },
    });
    const asked = { model, messages: [{ role: 'user' as const, content: 'Hi' }] };
    const { response: plain } = await client.chat.completions.create(asked).withResponse();
    const { data: stream, response: streamed } = await client.chat.completions.create({ ...asked, stream: true }).withResponse();
    for await (const chunk of stream) assert.equal(chunk.object, 'chat.completion.chunk');
    for (const response of [plain, streamed]) {
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.equal(record.usage.prompt_tokens, 6_000);
      assert.equal(record.usage.cached_tokens, 2_000);
      assert.deepEqual([record.detail.cacheWriteTokens, record.detail.cacheWrite1hTokens], [3_000, 1_000]);
      // claude-sonnet-4-5: 1,000 × $3 + 2,000 × $0.30 + 2,000 × $3.75 + 1,000 × $6 + 500 × $15 per 1M tokens
      assert.equal(record.cost_usd, (3_000 + 600 + 7_500 + 6_000 + 7_500) / 1_000_000);
    }
  });

  test('hints with no Anthropic equivalent are left out and named in the log, streamed or not', async () => {
    const asked = { model, messages: [{ role: 'user' as const, content: 'Hi' }], seed: 7, presence_penalty: 0.5, frequency_penalty: null, temperature: 0.2 };
    const { response: plain } = await client.chat.completions.create(asked).withResponse();
    assert.deepEqual(['seed', 'presence_penalty', 'temperature'].map((field) => field in fake.lastBody()), [false, false, true]);
    const { data: stream, response: streamed } = await client.chat.completions.create({ ...asked, stream: true }).withResponse();
    for await (const chunk of stream) assert.equal(chunk.object, 'chat.completion.chunk');
    for (const response of [plain, streamed]) {
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.deepEqual(record.detail.droppedFields, ['seed', 'presence_penalty']);
    }
  });

  test('tool calls: tools reach Anthropic with input_schema; tool_use comes back as tool_calls', async () => {
    fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Oslo' } }], stop_reason: 'tool_use' } });
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [weatherTool], tool_choice: 'required' });
    assert.equal(fake.lastBody().model, 'claude-sonnet-4-5');
    assert.deepEqual(fake.lastBody().tools, [{ name: 'get_weather', input_schema: weatherTool.function.parameters }]);
    assert.deepEqual(fake.lastBody().tool_choice, { type: 'any' });
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.deepEqual(choice.message.tool_calls, [{ id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
    assert.equal(completion.model, model);
  });

  test('streamed tool calls: the SDK assembles the call from the deltas', async () => {
    fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01B', name: 'get_weather', input: { city: 'Lima' } }], stop_reason: 'tool_use' } });
    const stream = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'Weather in Lima?' }], tools: [weatherTool] });
    const completion = await stream.finalChatCompletion();
    const call = completion.choices[0]!.message.tool_calls?.[0];
    assert.equal(call?.id, 'toolu_01B');
    assert.equal(call?.type === 'function' ? call.function.arguments : undefined, '{"city":"Lima"}');
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  });

  test('runTools, streamed: a tool without arguments is run with {} and its result goes back as a tool_result', async () => {
    fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01T', name: 'current_time', input: {} }], stop_reason: 'tool_use' } });
    const received: unknown[] = [];
    const runner = client.chat.completions.runTools({
      model,
      stream: true,
      messages: [{ role: 'user', content: 'What time is it?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'current_time',
            description: 'The time now.',
            parameters: { type: 'object', properties: {} },
            parse: JSON.parse,
            function: (args: unknown) => {
              received.push(args);
              fake.reply({ message: { content: [{ type: 'text', text: 'It is noon.' }] } });
              return '12:00';
            },
          },
        },
      ],
    });
    const completion = await runner.finalChatCompletion();
    assert.deepEqual(received, [{}]);
    assert.equal(completion.choices[0]!.message.content, 'It is noon.');
    const [, assistant, results] = fake.lastBody().messages;
    assert.deepEqual(assistant.content, [{ type: 'tool_use', id: 'toolu_01T', name: 'current_time', input: {} }]);
    assert.deepEqual(results.content, [{ type: 'tool_result', tool_use_id: 'toolu_01T', content: '12:00' }]);
  });

  test('response_format json_schema: a forced tool upstream, the JSON as content, finish_reason stop', async () => {
    const verdict = { passed: false, reason: 'Off topic.', requires_attention: false };
    fake.reply({ message: { content: [{ type: 'tool_use', id: 'toolu_01V', name: 'vetting_verdict', input: verdict }], stop_reason: 'tool_use' } });
    const completion = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Judge the draft.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'vetting_verdict', schema: { type: 'object', properties: { passed: { type: 'boolean' } } } } },
    });
    assert.deepEqual(fake.lastBody().tool_choice, { type: 'tool', name: 'vetting_verdict' });
    assert.deepEqual(JSON.parse(completion.choices[0]!.message.content ?? ''), verdict);
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
  });

  test('cached prompt tokens: counted in prompt_tokens and shown as cached_tokens', async () => {
    fake.reply({ message: { usage: { input_tokens: 4, cache_read_input_tokens: 1000, cache_creation_input_tokens: 6, output_tokens: 3 } } });
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(completion.usage?.prompt_tokens, 1010);
    assert.equal(completion.usage?.completion_tokens, 3);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 1000);

    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    assert.equal(usage?.prompt_tokens, 1010);
    assert.equal(usage?.prompt_tokens_details?.cached_tokens, 1000);
  });

  test('the gateway\'s own account out of credit (402 billing_error) is a neutral 502 for the caller', async () => {
    fake.reply({ error: 'billing_error' });
    await assert.rejects(client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
      assert.equal(error.code, 'provider_error');
      assert.doesNotMatch(error.message, /credit|billing|Anthropic/i);
      return true;
    });
  });

  test('stop sequences Anthropic cannot take (whitespace only, empty) are a 400 naming stop, before any upstream call', async () => {
    const sent = fake.requests.length;
    for (const stop of ['\n', ['END', '\n\n'], ['']]) {
      await assert.rejects(client.chat.completions.create({ model, messages: [{ role: 'user', content: 'One line, please.' }], stop }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal(error.code, 'invalid_body');
        assert.match(String(error.param), /^stop/);
        assert.match(error.message, /whitespace|empty/);
        assert.doesNotMatch(error.message, /stop_sequences/);
        return true;
      });
    }
    assert.equal(fake.requests.length, sent);
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], stop: ['END', ' END\n'] });
    assert.deepEqual(fake.lastBody().stop_sequences, ['END', ' END\n']);
  });

  test('a refusal is finish_reason content_filter', async () => {
    fake.reply({ message: { content: [], stop_reason: 'refusal' } });
    const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Something unsafe' }] });
    assert.equal(completion.choices[0]!.finish_reason, 'content_filter');
  });

  test('an image data URI labelled image/jpg is answered, not refused', async () => {
    fake.reply({ message: { content: [{ type: 'text', text: 'A tiny image.' }] } });
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Describe it.' }, { type: 'image_url', image_url: { url: `data:image/jpg;base64,${JPEG_BASE64}` } }] },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, 'A tiny image.');
    assert.equal(fake.lastBody().messages[0].content[1].source.media_type, 'image/jpeg');
  });

  test('system messages, max_tokens and multimodal parts reach Anthropic translated', async () => {
    await client.chat.completions.create({
      model,
      max_tokens: 300,
      messages: [
        { role: 'system', content: 'You are a careful reader.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare the picture with the document.' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
            { type: 'file', file: { filename: 'doc.pdf', file_data: `data:application/pdf;base64,${PDF_BASE64}` } },
          ],
        },
      ],
    });
    const body = fake.lastBody();
    assert.equal(body.system, 'You are a careful reader.');
    assert.equal(body.max_tokens, 300);
    assert.deepEqual(body.messages[0].content.slice(1), [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
    ]);
  });
});
