import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { FAKE_AUDIO, FAKE_PNG_BASE64, FAKE_TRANSCRIPT, formFields, startOpenAIFake, type OpenAIChatScript, type OpenAIFake } from './fakes/openai.js';
import { spyOnEstimates } from './helpers/estimates.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';
import { openaiClient, postRawStream, rejectsWith, runProviderConformance } from './providers/conformance.js';
import { redactValue } from '../src/logs/index.js';
import { patchJsonObject } from '../src/providers/index.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';

/*
 * The OpenAI-compatible adapter: the shared conformance suite for OpenAI and for an
 * operator-declared compatible provider, then OpenAI's own surface through a real gateway
 * driven by the official SDK: pass-through, every endpoint, and what reached the fake.
 */

const UPSTREAM_KEY = 'sk-test-fake-openai-0123456789';
const OLLAMA_KEY = 'ollama-local-key';

runProviderConformance({
  name: 'openai',
  startFake: startOpenAIFake,
  gateway: (fakeUrl) => ({ env: { OPENAI_BASE_URL: `${fakeUrl}/v1`, OPENAI_API_KEY: UPSTREAM_KEY } }),
  chatModel: 'gpt-4o-mini',
  upstreamKey: UPSTREAM_KEY,
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'The model `gpt-4o-mini` does not exist or you do not have access to it.',
  providerRequestId: /^req_fake$/,
  providerRequestIdOnError: true,
  takesClientRequestId: true,
  capabilityModels: { embeddings: 'text-embedding-3-small', images: 'dall-e-3', speech: 'tts-1', transcription: 'whisper-1' },
});

runProviderConformance({
  name: 'ollama',
  startFake: startOpenAIFake,
  gateway: (fakeUrl) => ({
    configFile: {
      providers: {
        compatible: [
          {
            name: 'ollama',
            baseUrl: `${fakeUrl}/v1`,
            apiKey: OLLAMA_KEY,
            models: [
              { id: 'llama3.2-vision', upstreamId: 'llama3.2-vision:11b', input_modalities: ['text', 'image', 'file'] },
              { id: 'nomic-embed-text', mode: 'embedding' },
              { id: 'sdxl-turbo', mode: 'image_generation' },
              { id: 'kokoro', mode: 'audio_speech' },
              { id: 'whisper-large-v3', mode: 'audio_transcription' },
            ],
          },
        ],
      },
    },
  }),
  chatModel: 'llama3.2-vision',
  upstreamKey: OLLAMA_KEY,
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'model "llama3.2-vision:11b" not found, try pulling it first',
  providerRequestId: /^req_fake$/,
  providerRequestIdOnError: true,
  takesClientRequestId: true,
  capabilityModels: { embeddings: 'nomic-embed-text', images: 'sdxl-turbo', speech: 'kokoro', transcription: 'whisper-large-v3' },
});

const TEXT_BODY_LIMIT = 256 * 1024;

describe('OpenAI-compatible adapter through the gateway (openai SDK)', () => {
  let fake: OpenAIFake;
  let localFake: OpenAIFake;
  let gateway: TestGateway;
  let client: OpenAI;
  let key: string;
  const records = new RecordTap();

  before(async () => {
    fake = await startOpenAIFake();
    localFake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: UPSTREAM_KEY },
      configFile: {
        server: { bodyLimitBytes: TEXT_BODY_LIMIT },
        // A keyless local server, as Ollama usually runs.
        providers: { compatible: [{ name: 'local', baseUrl: `${localFake.server.url}/v1`, models: [{ id: 'qwen2.5' }] }] },
      },
      routes: [...ROUTE_MODULES, records.routes],
    });
    key = await gateway.createKey({ scopes: ['model:request'] });
    // Node's own fetch here: the SDK uploads files only with its FormData (no aborts in this suite).
    client = openaiClient(gateway.url, key);
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
    await localFake?.close();
  });

  const lastRequest = (server: OpenAIFake, path: string) => {
    const found = server.server.requests.filter((request) => request.path === path).at(-1);
    assert.ok(found !== undefined, `the fake received ${path}`);
    return found;
  };

  const post = (path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...headers },
      body: typeof body === 'string' || body instanceof FormData ? body : JSON.stringify(body),
    });

  describe('chat pass-through', () => {
    test('every request field reaches OpenAI unchanged; only provider and stream are dropped, model is the upstream id', async () => {
      const body = {
        model: 'gpt4o-mini',
        messages: [{ role: 'developer', content: 'Use tools.' }, { role: 'user', content: 'Weather in Paris?', name: 'ana' }],
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
        logprobs: true,
        top_logprobs: 2,
        n: 2,
        seed: 42,
        stop: ['\n\n', 'END'],
        temperature: 0.3,
        max_completion_tokens: 100,
        parallel_tool_calls: false,
        user: 'user-123',
        metadata: { team: 'a' },
        a_field_from_the_future: { nested: [1, 2, 3] },
        provider: 'openai',
        stream: false,
      };
      const response = await post('/v1/chat/completions', body);
      assert.equal(response.status, 200);
      const { provider: _provider, stream: _stream, ...expected } = body;
      assert.deepEqual(lastRequest(fake, '/v1/chat/completions').json, { ...expected, model: 'gpt-4o-mini' });
    });

    test('null in an optional field is "not set", as in the SDK\'s types: accepted, passed on, and estimated like an absent field', async () => {
      fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 1, completionTokens: 1 } });
      const nulls = { temperature: null, max_tokens: null, max_completion_tokens: null, n: null, stream: null, stream_options: null };
      const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], ...nulls });
      assert.equal(completion.choices[0]?.message.content, 'ok');
      const { stream: _stream, ...passed } = nulls;
      assert.deepEqual(lastRequest(fake, '/v1/chat/completions').json, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], ...passed });

      const image = await client.images.generate({ model: null, prompt: 'A cat', n: null, size: null, response_format: null });
      assert.equal(image.data?.length, 1);
      assert.equal(lastRequest(fake, '/v1/images/generations').json.model, 'gpt-image-1', 'a null model is the default image model');

      // A null reply budget reserves the assumed reply, not nothing.
      const estimates = spyOnEstimates(gateway);
      fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 1, completionTokens: 1 } });
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: null });
      assert.ok(estimates[0]!.tokens > 1024, `reserved ${estimates[0]!.tokens} tokens`);
    });

    test('file parts in the gateway\'s own forms (input_file, mime_type with bare base64) reach OpenAI in its file part form', async () => {
      fake.scriptChat({ kind: 'reply', text: 'Read them.', usage: { promptTokens: 9, completionTokens: 2 } });
      const pdf = Buffer.from('%PDF-1.4 fake').toString('base64');
      const dataUri = `data:application/pdf;base64,${pdf}`;
      const content = [
        { type: 'text', text: 'Compare these.' },
        { type: 'input_file', file: { filename: 'a.pdf', mime_type: 'application/pdf', file_data: pdf } },
        { type: 'input_file', filename: 'b.pdf', file_data: dataUri },
        { type: 'input_file', filename: 'e.pdf', mime_type: 'application/pdf', file_data: pdf },
        { type: 'file', file: { filename: 'c.pdf', mime_type: 'application/pdf', file_data: dataUri } },
        { type: 'file', file: { filename: 'd.pdf', file_data: dataUri } },
      ];
      const messages = [{ role: 'user', content }] as unknown as OpenAI.Chat.ChatCompletionMessageParam[];
      const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
      assert.equal(completion.choices[0]?.message.content, 'Read them.');
      const file = (filename: string) => ({ type: 'file', file: { filename, file_data: dataUri } });
      assert.deepEqual(lastRequest(fake, '/v1/chat/completions').json.messages, [
        { role: 'user', content: [{ type: 'text', text: 'Compare these.' }, file('a.pdf'), file('b.pdf'), file('e.pdf'), file('c.pdf'), file('d.pdf')] },
      ]);
      const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
      for await (const _chunk of stream);
      assert.deepEqual(lastRequest(fake, '/v1/chat/completions').json.messages[0].content[1], file('a.pdf'), 'streamed too');
    });

    test('every response field comes back unchanged, except model which shows what the caller asked for', async () => {
      const completion = {
        id: 'chatcmpl-tools',
        object: 'chat.completion',
        created: 1_700_000_123,
        model: 'gpt-4o-mini-2024-07-18',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
              annotations: [],
            },
            logprobs: { content: [{ token: 'x', logprob: -0.1, bytes: [120], top_logprobs: [] }], refusal: null },
            finish_reason: 'tool_calls',
          },
          { index: 1, message: { role: 'assistant', content: 'Sunny.', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' },
        ],
        usage: {
          prompt_tokens: 40,
          completion_tokens: 12,
          total_tokens: 52,
          prompt_tokens_details: { cached_tokens: 32, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        },
        service_tier: 'default',
        system_fingerprint: 'fp_abc',
        an_unknown_vendor_field: { kept: true },
      };
      fake.scriptChat({ kind: 'completion', body: completion });
      const { data, response } = await client.chat.completions
        .create({ model: 'service-1', messages: [{ role: 'user', content: 'Weather?' }], n: 2 })
        .withResponse();
      assert.deepEqual(JSON.parse(JSON.stringify(data)), { ...completion, model: 'service-1' });
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.requestedModel, 'service-1');
      assert.equal(record.usage?.cachedPromptTokens, 32);
      assert.equal(typeof record.upstreamLatencyMs, 'number');
    });

    test('streaming: the caller\'s stream_options reach OpenAI with include_usage forced on', async () => {
      fake.scriptChat({ kind: 'stream', deltas: ['a', 'b'], usage: { promptTokens: 3, completionTokens: 2 } });
      const result = await postRawStream(gateway.url, key, {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hi' }],
        stream_options: { include_obfuscation: false },
        logprobs: true,
      });
      assert.equal(result.data.at(-1), '[DONE]');
      const upstream = lastRequest(fake, '/v1/chat/completions').json;
      assert.equal(upstream.stream, true);
      assert.deepEqual(upstream.stream_options, { include_obfuscation: false, include_usage: true });
      assert.equal(upstream.logprobs, true);
      const chunk = JSON.parse(result.data[0]!);
      assert.equal(chunk.system_fingerprint, 'fp_fake0001', 'chunk fields pass through');
      assert.equal(chunk.service_tier, 'default');
    });

    test('usage on a content chunk is accepted, and shown as a usage chunk when asked', async () => {
      const chunk = (content: string, extra: object = {}) =>
        JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra });
      fake.scriptChat({
        kind: 'frames',
        frames: [chunk('Hi'), chunk('!', { usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } }), '[DONE]'],
      });
      const result = await postRawStream(gateway.url, key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream_options: { include_usage: true } });
      const chunks = result.data.slice(0, -1).map((data) => JSON.parse(data));
      assert.equal(chunks.map((item) => item.choices[0]?.delta.content ?? '').join(''), 'Hi!');
      assert.deepEqual(chunks.at(-1).choices, []);
      assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
      assert.equal(chunks.at(-1).model, 'gpt-4o-mini');
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.usage?.totalTokens, 6);
    });

    test('stream chunks go on as the provider wrote them, with only the model and usage changed, one line each', async () => {
      const content = '"choices":[{"index":0,"delta":{"content":"caf\\u00e9 \\"model\\":\\"x\\""},"finish_reason":null}]';
      fake.scriptChat({
        kind: 'frames',
        frames: [
          `{"id":"c1", "object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini-2024-07-18","score":1.50,${content},"usage":null}`,
          // One event in two data lines: the parser joins them with a line break.
          `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",\ndata: "choices":[{"index":0,"delta":{"content":"!"},"finish_reason":null}],"usage":null}`,
          // The model twice: JSON.parse keeps the last, so the text is not used.
          '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","model":"upstream-secret-name","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
          '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}',
          '[DONE]',
        ],
      });
      const result = await postRawStream(gateway.url, key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(result.data[0], `{"id":"c1", "object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","score":1.50,${content}}`);
      for (const data of result.data) assert.ok(!data.includes('\n') && !data.includes('\r'), `one line: ${JSON.stringify(data)}`);
      assert.deepEqual(JSON.parse(result.data[1]!), {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, delta: { content: '!' }, finish_reason: null }],
      });
      assert.equal(JSON.parse(result.data[2]!).model, 'gpt-4o-mini');
      assert.ok(!result.raw.includes('upstream-secret-name'));
      assert.deepEqual(result.data.slice(3), ['[DONE]'], 'no usage chunk: the caller did not ask for it');
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.usage?.totalTokens, 6);
      assert.deepEqual((record.responsePayload as { choices: unknown[] }).choices, [{ index: 0, content: 'café "model":"x"!', finish_reason: 'stop' }]);
    });

    test('a streamed tool call is assembled in the request log, as the SDK assembles it', async () => {
      const chunk = (delta: object, finish: string | null = null) =>
        JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
      fake.scriptChat({
        kind: 'frames',
        frames: [
          chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ],
      });
      const { data, response } = await client.chat.completions
        .create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
          stream: true,
        })
        .withResponse();
      const completion = await ChatCompletionStream.fromReadableStream(data.toReadableStream()).finalChatCompletion();
      const toolCalls = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];
      assert.deepEqual(completion.choices[0]?.message.tool_calls, toolCalls);
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.deepEqual((record.responsePayload as { choices: unknown[] }).choices, [{ index: 0, content: '', tool_calls: toolCalls, finish_reason: 'tool_calls' }]);
    });

    test('a streamed refusal is assembled in the request log', async () => {
      const chunk = (delta: object, finish: string | null = null) =>
        JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
      fake.scriptChat({
        kind: 'frames',
        frames: [chunk({ role: 'assistant', content: null, refusal: '' }), chunk({ refusal: "I'm sorry, " }), chunk({ refusal: 'I cannot help with that.' }), chunk({}, 'stop'), '[DONE]'],
      });
      const result = await postRawStream(gateway.url, key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Something unsafe' }] });
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.deepEqual((record.responsePayload as { choices: unknown[] }).choices, [{ index: 0, content: '', refusal: "I'm sorry, I cannot help with that.", finish_reason: 'stop' }]);

      // Some servers send an empty refusal on every chunk: that is no refusal.
      fake.scriptChat({ kind: 'frames', frames: [chunk({ role: 'assistant', content: 'Sure.', refusal: '' }), chunk({ refusal: '' }, 'stop'), '[DONE]'] });
      const answered = await postRawStream(gateway.url, key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      const answer = await records.wait(answered.headers.get('x-request-id')!);
      assert.deepEqual((answer.responsePayload as { choices: unknown[] }).choices, [{ index: 0, content: 'Sure.', finish_reason: 'stop' }]);
    });

    test('a stream without usage keeps "not reported" (null), never zero', async () => {
      const chunk = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] });
      fake.scriptChat({ kind: 'frames', frames: [chunk, '[DONE]'] });
      const result = await postRawStream(gateway.url, key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(result.data.at(-1), '[DONE]');
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.usage, null);
    });

    test('a malformed JSON frame after the first ends the stream with an error chunk', async () => {
      const chunk = JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] });
      fake.scriptChat({ kind: 'frames', frames: [chunk, '{"id": "broken', '[DONE]'] });
      const result = await postRawStream(gateway.url, key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      const last = JSON.parse(result.data.at(-1)!);
      assert.equal(last.error.code, 'provider_error');
      assert.ok(!result.data.includes('[DONE]'));
    });

    test('a client that reads late gets the whole stream in order: the gateway waits for it instead of dropping or piling up frames', { timeout: 30_000 }, async () => {
      // ~24 MB of frames: more than the socket buffers between the three processes hold, so the
      // gateway's writes to the client fill up and it has to pause the upstream and resume later.
      const deltas = Array.from({ length: 12_000 }, (_, index) => `${String(index).padStart(6, '0')}${'x'.repeat(2000)}`);
      fake.scriptChat({ kind: 'stream', deltas, usage: { promptTokens: 3, completionTokens: deltas.length } });
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count' }], stream: true }),
      });
      await new Promise((resolve) => setTimeout(resolve, 500)); // nothing read meanwhile
      const frames = (await response.text()).split('\n\n').filter((frame) => frame.length > 0);
      assert.equal(frames.at(-1), 'data: [DONE]');
      const content = frames.slice(0, -1).map((frame) => (JSON.parse(frame.slice('data: '.length)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '');
      assert.equal(content.join(''), deltas.join(''));
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.usage?.completionTokens, deltas.length);
    });

    test('a malformed first frame is a 502 before anything was streamed', async () => {
      fake.scriptChat({ kind: 'frames', frames: ['not json', '[DONE]'] });
      const response = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      assert.equal(response.status, 502);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'provider_error');
    });

    test('OpenAI\'s 429 insufficient_quota (the gateway\'s account out of credit) is a neutral 502, not a rate limit to wait out', async () => {
      fake.scriptChat({ kind: 'quota-exhausted' });
      const error = await rejectsWith(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }), 502, 'provider_error');
      assert.doesNotMatch(error.message, /quota|billing|credit/i);
      assert.equal(error.headers?.get('retry-after'), null);
      const record = await records.wait(error.requestID!);
      assert.equal(record.logDetail?.upstreamStatus, 429);
      assert.equal(record.logDetail?.upstreamType, 'insufficient_quota');
    });

    test('only the configured credential goes upstream: never the caller\'s sk-mg- key or other headers', async () => {
      fake.scriptChat({ kind: 'reply', text: 'ok', usage: { promptTokens: 1, completionTokens: 1 } });
      await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }, { 'content-type': 'application/json', cookie: 'session=abc', 'x-platform-id': 'web' });
      const upstream = lastRequest(fake, '/v1/chat/completions');
      assert.equal(upstream.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
      assert.equal(upstream.headers.cookie, undefined);
      assert.equal(upstream.headers['x-platform-id'], undefined);
      assert.ok(!JSON.stringify(upstream.headers).includes('sk-mg-'));
    });
  });

  describe('operator-declared compatible providers', () => {
    test('a declared model goes to its provider; a keyless provider gets no Authorization header', async () => {
      localFake.scriptChat({ kind: 'reply', text: 'local answer', usage: { promptTokens: 2, completionTokens: 2 } });
      const completion = await client.chat.completions.create({ model: 'qwen2.5', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(completion.choices[0]?.message.content, 'local answer');
      assert.equal(completion.model, 'qwen2.5');
      const upstream = lastRequest(localFake, '/v1/chat/completions');
      assert.equal(upstream.json.model, 'qwen2.5');
      assert.equal(upstream.headers.authorization, undefined);
    });

    test('with provider named, a model id the catalog does not list reaches that provider', async () => {
      const response = await post('/v1/chat/completions', { model: 'mistral:7b', provider: 'local', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { model: string }).model, 'mistral:7b');
      const upstream = lastRequest(localFake, '/v1/chat/completions').json;
      assert.equal(upstream.model, 'mistral:7b');
      assert.equal(upstream.provider, undefined);
    });
  });

  describe('embeddings', () => {
    test('SDK embeddings (base64 encoding by default) pass through; model shows what was asked', async () => {
      const { data, response } = await client.embeddings
        .create({ model: 'text-embedding-3-small', input: ['first text', 'second'], dimensions: 4 })
        .withResponse();
      assert.equal(data.object, 'list');
      assert.equal(data.model, 'text-embedding-3-small');
      assert.equal(data.data.length, 2);
      assert.equal(data.data[0]?.embedding.length, 4);
      assert.ok(Math.abs((data.data[1]?.embedding[0] ?? 0) - 0.002) < 1e-6, 'base64 vectors decode to what the fake sent');
      const upstream = lastRequest(fake, '/v1/embeddings').json;
      assert.deepEqual(upstream, { model: 'text-embedding-3-small', input: ['first text', 'second'], dimensions: 4, encoding_format: 'base64' });
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.mode, 'embedding');
      assert.equal(record.usage?.promptTokens, 3);
      assert.equal(record.usage?.completionTokens, 0);
    });

    test('float vectors go on as the provider wrote them (not serialised again); an alias still shows as asked', async () => {
      const response = await post('/v1/embeddings', { model: 'text-embedding', input: 'hello', encoding_format: 'float', dimensions: 3 });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const text = await response.text();
      assert.match(text, /\n {6}"embedding": \[\n/, `the provider's own formatting is kept: ${text.slice(0, 200)}`);
      const body = JSON.parse(text) as { model: string; data: { embedding: number[] }[] };
      assert.equal(body.model, 'text-embedding');
      assert.equal(lastRequest(fake, '/v1/embeddings').json.model, 'text-embedding-3-small');
      assert.deepEqual(body.data[0]?.embedding, [1, 2, 3].map((position) => 0.001 * position));

      // Asked by the id the provider answers with: its bytes go on untouched.
      const exact = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float', dimensions: 3 });
      const exactText = await exact.text();
      assert.match(exactText, /^\{\n {2}"object": "list",\n/);
      assert.equal((JSON.parse(exactText) as { model: string }).model, 'text-embedding-3-small');
    });

    test('float vectors in any JSON spelling reach the client byte for byte; the log keeps their count and size', async () => {
      const json =
        '{ "object": "list", "usage": {"prompt_tokens": 2, "total_tokens": 2},\n"data": [\n' +
        '  {"object": "embedding", "index": 0, "embedding": [ 1e-7, -0.5E+3,\r\n\t0.25 ]},\n' +
        '  {"object": "embedding", "index": 1, "embedding": [0,-0,2.5e10]}\n], "model": "text-embedding-3-small" }';
      const usage = { prompt_tokens: 2, total_tokens: 2 };
      fake.answerNext('/v1/embeddings', json);
      const exact = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float' });
      assert.equal(exact.status, 200);
      assert.equal(await exact.text(), json);
      const record = await records.wait(exact.headers.get('x-request-id')!);
      assert.deepEqual(record.responsePayload, { object: 'list', embeddings: 2, dimensions: 3, model: 'text-embedding-3-small', usage });

      // Asked by an alias: only `model` is rewritten (and comes first).
      fake.answerNext('/v1/embeddings', json);
      const aliased = await post('/v1/embeddings', { model: 'text-embedding', input: ['a', 'b'], encoding_format: 'float' });
      assert.equal(await aliased.text(), patchJsonObject(Buffer.from(json), { model: 'text-embedding' }, []).toString('utf8'));
      const aliasedRecord = await records.wait(aliased.headers.get('x-request-id')!);
      assert.deepEqual(aliasedRecord.responsePayload, { object: 'list', embeddings: 2, dimensions: 3, model: 'text-embedding', usage });
    });

    test('base64 vectors: the log keeps their count, no size', async () => {
      const response = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: ['a', 'b', 'c'], encoding_format: 'base64' });
      assert.equal(response.status, 200);
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.deepEqual(record.responsePayload, { object: 'list', embeddings: 3, dimensions: null, model: 'text-embedding-3-small', usage: { prompt_tokens: 3, total_tokens: 3 } });
    });

    test('a server that ignores encoding_format base64 (the SDK\'s default) and answers floats: the vectors reach the SDK as base64', async () => {
      const vectors = [[0.5, -0.25, 0.125], [1.5, 2, -3]];
      fake.answerNext(
        '/v1/embeddings',
        JSON.stringify({ object: 'list', data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })), model: 'text-embedding-3-small', usage: { prompt_tokens: 2, total_tokens: 2 } }),
      );
      const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'] }).withResponse();
      assert.deepEqual(data.data.map((item) => item.embedding), vectors);
      assert.deepEqual(data.usage, { prompt_tokens: 2, total_tokens: 2 });
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.deepEqual(record.responsePayload, { object: 'list', embeddings: 2, dimensions: 3, model: 'text-embedding-3-small', usage: { prompt_tokens: 2, total_tokens: 2 } });
    });

    test('a malformed number in a float vector is a provider_error, not forwarded', async () => {
      for (const number of ['01', '1.', '.5', '1e', 'NaN', '+1', '1..2']) {
        fake.answerNext('/v1/embeddings', `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,${number},0.3]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`);
        const response = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'a', encoding_format: 'float' });
        assert.equal(response.status, 502, number);
        const { error } = (await response.json()) as { error: { code: string; type: string } };
        assert.deepEqual([error.code, error.type], ['provider_error', 'api_error'], number);
        const record = await records.wait(response.headers.get('x-request-id')!);
        assert.equal(record.logDetail?.reason, 'response body is not a JSON object with a "data" list', number);
      }
    });

    test('model may be omitted (the catalog\'s embedding model); stream: true is not honoured', async () => {
      const response = await post('/v1/embeddings', { input: 'hello', stream: true });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      const upstream = lastRequest(fake, '/v1/embeddings').json;
      assert.equal(upstream.model, 'text-embedding-3-small');
      assert.equal(upstream.stream, undefined);
    });

    test('input is required and must not be empty', async () => {
      for (const body of [{ model: 'text-embedding-3-small' }, { model: 'text-embedding-3-small', input: '' }, { input: 42 }]) {
        const response = await post('/v1/embeddings', body);
        assert.equal(response.status, 400);
        const error = ((await response.json()) as { error: { code: string; message: string } }).error;
        assert.equal(error.code, 'invalid_body');
        assert.match(error.message, /input/);
      }
    });

    test('an upstream 400 on embeddings comes back as 400 with the reason and the field it names', async () => {
      fake.failNext('/v1/embeddings', 400, "This model's maximum context length is 8192 tokens.", 'input');
      const error = await rejectsWith(client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }), 400, 'invalid_body');
      assert.match(error.message, /maximum context length/);
      assert.equal(error.param, 'input');
    });
  });

  describe('images', () => {
    test('b64_json images come back unchanged; the log keeps their size, not the data', async () => {
      const { data, response } = await client.images
        .generate({ model: 'dall-e-3', prompt: 'A red square', n: 1, size: '1024x1024', response_format: 'b64_json', quality: 'hd' })
        .withResponse();
      assert.equal(data.data?.[0]?.b64_json, FAKE_PNG_BASE64);
      assert.equal(data.data?.[0]?.revised_prompt, 'A revised prompt.');
      assert.deepEqual(lastRequest(fake, '/v1/images/generations').json, {
        model: 'dall-e-3',
        prompt: 'A red square',
        n: 1,
        size: '1024x1024',
        response_format: 'b64_json',
        quality: 'hd',
      });
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.imageCount, 1);
      // What the log stores is the record through the one redaction: a reference, once.
      const stored = JSON.stringify(redactValue(record.responsePayload));
      assert.ok(!stored.includes(FAKE_PNG_BASE64));
      assert.match(stored, /"b64_json":"\[omitted image\/png: \d+ bytes, sha256 [0-9a-f]{64}\]"/);
    });

    test('url images, and the default image model with its usage', async () => {
      const urls = await client.images.generate({ model: 'dall-e-3', prompt: 'A cat', n: 2 });
      assert.deepEqual(urls.data?.map((image) => image.url), ['https://images.example/generated-0.png', 'https://images.example/generated-1.png']);
      const response = await post('/v1/images/generations', { prompt: 'A dog' });
      assert.equal(response.status, 200);
      assert.equal(lastRequest(fake, '/v1/images/generations').json.model, 'gpt-image-1');
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.usage?.completionTokens, 272);
    });

    test('stream: true is refused naming the field: answered whole, the SDK would yield no events and no error', async () => {
      const before = fake.server.requests.length;
      const error = await rejectsWith(client.images.generate({ model: 'gpt-image-1', prompt: 'A cat', stream: true, partial_images: 1 }), 400, 'invalid_body');
      assert.equal(error.param, 'stream');
      assert.equal(fake.server.requests.length, before, 'no provider call');
    });

    test('a bad size names the field', async () => {
      const response = await post('/v1/images/generations', { prompt: 'A cat', size: 'big' });
      assert.equal(response.status, 400);
      assert.match(((await response.json()) as { error: { message: string } }).error.message, /size/);
    });
  });

  describe('speech', () => {
    for (const [format, contentType] of [
      [undefined, 'audio/mpeg'],
      ['opus', 'audio/ogg'],
      ['wav', 'audio/wav'],
      ['flac', 'audio/flac'],
      ['aac', 'audio/aac'],
      ['pcm', 'audio/pcm'],
    ] as const) {
      test(`response_format ${format ?? '(default mp3)'} → ${contentType} audio bytes`, async () => {
        const response = await client.audio.speech.create({ model: 'tts-1', input: 'Hello there', voice: 'alloy', ...(format !== undefined ? { response_format: format } : {}) });
        assert.equal(response.headers.get('content-type'), contentType);
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), FAKE_AUDIO);
        const upstream = lastRequest(fake, '/v1/audio/speech').json;
        assert.deepEqual(upstream, { model: 'tts-1', input: 'Hello there', voice: 'alloy', ...(format !== undefined ? { response_format: format } : {}) });
      });
    }

    test('stream_format sse is refused naming the field: its events would come back whole, labelled as audio', async () => {
      const before = fake.server.requests.length;
      const error = await rejectsWith(client.audio.speech.create({ model: 'gpt-4o-mini-tts', input: 'Hello', voice: 'alloy', stream_format: 'sse' }), 400, 'invalid_body');
      assert.equal(error.param, 'stream_format');
      assert.equal(fake.server.requests.length, before, 'no provider call');
    });
  });

  describe('transcription (multipart)', () => {
    const audio = Buffer.from('RIFF....WAVEfmt fake audio bytes');

    test('SDK upload: file and fields reach OpenAI; duration_seconds is kept for cost logging only', async () => {
      const { data, response } = await client.audio.transcriptions
        .create({
          file: await toFile(audio, 'speech.wav', { type: 'audio/wav' }),
          model: 'whisper-1',
          language: 'en',
          timestamp_granularities: ['word', 'segment'],
          duration_seconds: 12,
        } as OpenAI.Audio.TranscriptionCreateParamsNonStreaming)
        .withResponse();
      assert.equal(data.text, FAKE_TRANSCRIPT);
      const { fields, files } = formFields(lastRequest(fake, '/v1/audio/transcriptions'));
      assert.deepEqual(fields, { model: 'whisper-1', language: 'en', 'timestamp_granularities[]': ['word', 'segment'] });
      assert.equal(files.length, 1);
      assert.equal(files[0]?.filename, 'speech.wav');
      assert.equal(files[0]?.contentType, 'audio/wav');
      assert.deepEqual(files[0]?.bytes, audio);
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.mode, 'audio_transcription');
      assert.equal(record.audioSeconds, 12);
      assert.equal(record.usage?.promptTokens, 14);
      assert.equal(record.media?.bytes, audio.length);
    });

    test('duration_minutes, or the duration the provider reports (verbose_json)', async () => {
      const form = new FormData();
      form.append('model', 'whisper-1');
      form.append('duration_minutes', '1.5');
      form.append('file', new Blob([audio], { type: 'audio/wav' }), 'a.wav');
      const minutes = await post('/v1/audio/transcriptions', form, {});
      assert.equal(minutes.status, 200);
      assert.equal((await records.wait(minutes.headers.get('x-request-id')!)).audioSeconds, 90);

      const verbose = await client.audio.transcriptions
        .create({ file: await toFile(audio, 'a.wav'), model: 'whisper-1', response_format: 'verbose_json' })
        .withResponse();
      assert.equal(verbose.data.duration, 8.47);
      assert.equal((await records.wait(verbose.response.headers.get('x-request-id')!)).audioSeconds, 8.47);
    });

    test('text formats come back as text, byte for byte', async () => {
      const form = new FormData();
      form.append('model', 'gpt-4o-transcribe');
      form.append('response_format', 'text');
      form.append('file', new Blob([audio]), 'a.mp3');
      const response = await post('/v1/audio/transcriptions', form, {});
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(await response.text(), `${FAKE_TRANSCRIPT}\n`);
    });

    test('missing file or model, a bad duration (not a number, negative, past a day) → 400 naming the field', async () => {
      const noFile = new FormData();
      noFile.append('model', 'whisper-1');
      const noModel = new FormData();
      noModel.append('file', new Blob([audio]), 'a.wav');
      const badDurations = [
        ['duration_seconds', 'ten'],
        ['duration_seconds', '-1'],
        ['duration_seconds', '86401'],
        // 1e308 seconds overflowed the cost's arithmetic: the request was answered and never logged.
        ['duration_seconds', '1e308'],
        ['duration_minutes', '1441'],
      ].map(([field, value]) => {
        const form = new FormData();
        form.append('model', 'whisper-1');
        form.append(field!, value!);
        form.append('file', new Blob([audio]), 'a.wav');
        return [form, field!] as const;
      });
      for (const [form, field] of [[noFile, 'file'], [noModel, 'model'], ...badDurations] as const) {
        const response = await post('/v1/audio/transcriptions', form, {});
        assert.equal(response.status, 400);
        const error = ((await response.json()) as { error: { code: string; param: string } }).error;
        assert.equal(error.code, 'invalid_body');
        assert.equal(error.param, field);
      }
    });

    test('stream: true is refused naming the field: answered whole, the SDK would yield no events and no error', async () => {
      const before = fake.server.requests.length;
      const error = await rejectsWith(client.audio.transcriptions.create({ file: await toFile(audio, 'a.wav'), model: 'gpt-4o-transcribe', stream: true }), 400, 'invalid_body');
      assert.equal(error.param, 'stream');
      assert.equal(fake.server.requests.length, before, 'no provider call');
    });

    test('an audio file over the documented limit → 413 naming it', async () => {
      const form = new FormData();
      form.append('model', 'whisper-1');
      form.append('file', new Blob([Buffer.alloc(25 * 1024 * 1024 + 1)]), 'big.wav');
      const response = await post('/v1/audio/transcriptions', form, {});
      assert.equal(response.status, 413);
      const error = ((await response.json()) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'request_too_large');
      assert.match(error.message, /25 MiB/);
    });

    test('a form whose boundary is not the Content-Type\'s → 400 saying so, not "model is required"', async () => {
      const body = '--sent-boundary\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--sent-boundary--\r\n';
      const response = await post('/v1/audio/transcriptions', body, { 'content-type': 'multipart/form-data; boundary=other-boundary' });
      assert.equal(response.status, 400);
      const error = ((await response.json()) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, /boundary/);
    });

    test('a field sent as application/json goes on as its JSON text', async () => {
      const strategy = '{"type":"server_vad","threshold":0.5}';
      // FormData cannot give a text field a content type: the form is written out by hand.
      const boundary = 'mg-test-boundary';
      const parts = [
        ['model', 'gpt-4o-transcribe', ''],
        ['chunking_strategy', strategy, 'Content-Type: application/json\r\n'],
      ].map(([name, value, type]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n${type}\r\n${value}\r\n`);
      const file = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n${audio.toString('latin1')}\r\n--${boundary}--\r\n`;
      const response = await post('/v1/audio/transcriptions', parts.join('') + file, { 'content-type': `multipart/form-data; boundary=${boundary}` });
      assert.equal(response.status, 200);
      assert.deepEqual(formFields(lastRequest(fake, '/v1/audio/transcriptions')).fields, { model: 'gpt-4o-transcribe', chunking_strategy: strategy });
    });

    test('a text field over 1 MiB → 413 naming it, not sent upstream cut short', async () => {
      const before = fake.server.requests.length;
      const form = new FormData();
      form.append('model', 'whisper-1');
      form.append('prompt', 'p'.repeat(1024 * 1024 + 1));
      form.append('file', new Blob([audio]), 'a.wav');
      const response = await post('/v1/audio/transcriptions', form, {});
      assert.equal(response.status, 413);
      const error = ((await response.json()) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'request_too_large');
      assert.match(error.message, /"prompt".*1 MiB/);
      assert.equal(fake.server.requests.length, before, 'no provider call');
    });

    test('JSON to the transcription endpoint → 415', async () => {
      const response = await post('/v1/audio/transcriptions', { model: 'whisper-1' });
      assert.equal(response.status, 415);
    });
  });

  describe('requests the gateway refuses before any provider call', () => {
    test('non-JSON bodies on JSON endpoints → 415 (multipart is accepted only by transcriptions)', async () => {
      const form = new FormData();
      form.append('model', 'gpt-4o-mini');
      for (const path of ['/v1/chat/completions', '/v1/embeddings', '/v1/images/generations', '/v1/audio/speech']) {
        const text = await post(path, 'model=gpt-4o-mini', { 'content-type': 'text/plain' });
        assert.equal(text.status, 415, `${path} text/plain`);
        const multipart = await post(path, form, {});
        assert.equal(multipart.status, 415, `${path} multipart`);
        assert.equal(((await multipart.json()) as { error: { code: string } }).error.code, 'unsupported_media_type');
      }
    });

    test('a body over the limit → 413 request_too_large', async () => {
      const before = fake.chatRequests().length;
      const response = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(TEXT_BODY_LIMIT) }] });
      assert.equal(response.status, 413);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'request_too_large');
      assert.equal(fake.chatRequests().length, before);
    });

    test('unknown model → model_not_found; a model of another mode → model_mode_mismatch', async () => {
      const unknown = await rejectsWith(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] }), 400, 'model_not_found');
      assert.match(unknown.message, /GET \/v1\/models/);
      await rejectsWith(client.chat.completions.create({ model: 'text-embedding-3-small', messages: [{ role: 'user', content: 'Hi' }] }), 400, 'model_mode_mismatch');
      await rejectsWith(client.embeddings.create({ model: 'gpt-4o-mini', input: 'x' }), 400, 'model_mode_mismatch');
      await rejectsWith(client.audio.speech.create({ model: 'whisper-1', input: 'x', voice: 'alloy' }), 400, 'model_mode_mismatch');
    });

    test('content parts: field-naming 400s, refused image and file references', async () => {
      const ask = (content: unknown) => post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
      const cases: [unknown, string, string][] = [
        [[{ type: 'image_url', image_url: {} }], 'invalid_body', 'messages[0].content[0].image_url.url'],
        [[{ type: 'image_url', image_url: { url: 'ftp://host/cat.png' } }], 'invalid_image_url', 'messages[0].content[0].image_url.url'],
        [[{ type: 'image_url', image_url: { url: 'data:text/plain;base64,aGk=' } }], 'invalid_image_url', 'messages[0].content[0].image_url.url'],
        [[{ type: 'file', file: { file_id: 'file-abc' } }], 'invalid_body', 'messages[0].content[0].file.file_id'],
        [[{ type: 'file', file: { filename: 'a.pdf', file_data: 'https://files.example/a.pdf' } }], 'invalid_body', 'messages[0].content[0].file.file_data'],
        [[{ type: 'text' }], 'invalid_body', 'messages[0].content[0].text'],
        [42, 'invalid_body', 'messages[0].content'],
      ];
      for (const [content, code, param] of cases) {
        const response = await ask(content);
        assert.equal(response.status, 400, JSON.stringify(content));
        const error = ((await response.json()) as { error: { code: string; param: string } }).error;
        assert.equal(error.code, code, JSON.stringify(content));
        assert.equal(error.param, param);
      }
      // A role the gateway does not know goes to OpenAI as sent; OpenAI's 400 names the field.
      const role = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'Hi' }] });
      assert.equal(role.status, 400);
      const roleError = ((await role.json()) as { error: { message: string; param: string } }).error;
      assert.equal(roleError.param, 'messages[0].role');
      assert.match(roleError.message, /Invalid value: 'robot'/);
    });

    test('an image for a text-only model → unsupported_input_modality', async () => {
      const response = await post('/v1/chat/completions', {
        model: 'qwen2.5',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${FAKE_PNG_BASE64}` } }] }],
      });
      assert.equal(response.status, 400);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'unsupported_input_modality');
    });
  });
});

describe('a client that stops reading', () => {
  /** A gateway whose stall timeout is 1 s, its fake provider and a key; closed afterwards. */
  async function withStallGateway(run: (fake: OpenAIFake, gateway: TestGateway, key: string) => Promise<void>): Promise<void> {
    const fake = await startOpenAIFake();
    const gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: UPSTREAM_KEY },
      configFile: { server: { clientStallTimeoutMs: 1_000 } },
    });
    try {
      await run(fake, gateway, await gateway.createKey({ scopes: ['model:request'] }));
    } finally {
      await gateway.close();
      await fake.close();
    }
  }

  /** An answer of `content` (megabytes: far more than the socket buffers hold). */
  function bigAnswer(content: string): OpenAIChatScript {
    return {
      kind: 'completion',
      body: {
        id: 'chatcmpl-big',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      },
    };
  }

  /** Opens a raw connection and sends a chat request with `body` on it. */
  function sendRaw(gateway: TestGateway, key: string, body: Record<string, unknown>): Socket {
    const text = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Write a lot' }], ...body });
    const { hostname, port } = new URL(gateway.url);
    const client = connect(Number(port), hostname, () => {
      client.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
    });
    return client;
  }

  /** Sends a chat request on a raw connection that never reads. */
  function sendAndNeverRead(gateway: TestGateway, key: string, body: Record<string, unknown>): Socket {
    const client = sendRaw(gateway, key, body);
    client.pause();
    client.on('error', () => undefined);
    return client;
  }

  async function loggedCutOff(gateway: TestGateway): Promise<void> {
    let logged: { status: number; error_code: string; request_id: string } | undefined;
    for (const deadline = Date.now() + 10_000; logged === undefined; await new Promise((done) => setTimeout(done, 50))) {
      assert.ok(Date.now() < deadline, 'the request was not logged');
      logged = (await gateway.admin('GET', '/admin/v1/logs?limit=1')).body.data[0];
    }
    assert.deepEqual([logged.status, logged.error_code], [499, 'client_closed']);
    const { body: full } = await gateway.admin('GET', `/admin/v1/logs/${logged.request_id}`);
    assert.match(JSON.stringify(full.detail), /the client took no data for 1000 ms; its connection was closed/);
  }

  test('streaming: cut off after server.clientStallTimeoutMs, the upstream call ends, the request is logged 499 with the reason', { timeout: 60_000 }, () =>
    withStallGateway(async (fake, gateway, key) => {
      let upstreamClosed!: () => void;
      const upstreamClosedPromise = new Promise<void>((done) => (upstreamClosed = done));
      // ~24 MB: far more than the socket buffers hold, so the gateway's writes to the client back up.
      const deltas = Array.from({ length: 12_000 }, () => 'x'.repeat(2000));
      fake.scriptChat({ kind: 'stream-hang', deltas, onClose: () => upstreamClosed() });
      const client = sendAndNeverRead(gateway, key, { stream: true });
      // Without the cut-off the provider's connection stays open for good: undici's idle timeout does not run while it is paused.
      await upstreamClosedPromise;
      await loggedCutOff(gateway);
      client.destroy();
    }));

  test('a whole answer: the unsent bytes are not held for good, and the request is logged 499 with the reason', { timeout: 60_000 }, () =>
    withStallGateway(async (fake, gateway, key) => {
      // Node keeps the unsent rest in memory and, without the cut-off, the connection stays
      // open and the request unlogged (a response that never finishes is never logged) for good.
      fake.scriptChat(bigAnswer('y'.repeat(16 * 1024 * 1024)));
      const client = sendAndNeverRead(gateway, key, {});
      await loggedCutOff(gateway);
      client.destroy();
    }));

  test('a slow client that keeps reading is not cut off', { timeout: 60_000 }, () =>
    withStallGateway(async (fake, gateway, key) => {
      const content = 'z'.repeat(16 * 1024 * 1024);
      fake.scriptChat(bigAnswer(content));
      // Reads 512 KiB every 100 ms: the whole answer takes several times the stall timeout, but
      // data keeps leaving (the gateway sees it in steps of a few MB, as the kernel's buffers drain).
      const received = await new Promise<Buffer>((done, fail) => {
        const chunks: Buffer[] = [];
        let pending = 0;
        const client = sendRaw(gateway, key, {});
        client.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          pending += chunk.length;
          if (pending >= 512 * 1024) {
            pending = 0;
            client.pause();
            setTimeout(() => client.resume(), 100);
          }
        });
        client.on('error', fail);
        client.on('end', () => done(Buffer.concat(chunks)));
      });
      const text = received.toString('utf8');
      const answer = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { choices: { message: { content: string } }[] };
      assert.equal(answer.choices[0]!.message.content.length, content.length);
    }));
});
