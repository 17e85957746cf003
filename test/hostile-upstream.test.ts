import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE_AWS } from './fakes/bedrock.js';
import { startFakeServer, type FakeServer } from './fakes/fake-server.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';
import { postRawStream } from './providers/conformance.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';

/*
 * What a provider answers is not trusted either (and what a caller sends is mapped for each
 * vendor without trusting its depth). Every adapter, given answers that break its
 * vendor's documented shape — redirects, the list every client reads missing, nesting deeper
 * than JSON.stringify survives, negative or fractional token counts, stream frames of the
 * wrong kind — gives the caller the answer or a documented error (502 provider_error), never a 500 and
 * never a crash, and counts only token usage it can trust. One raw upstream plays OpenAI,
 * Gemini, Anthropic, Bedrock, Vertex, Azure and Mistral at once (each adapter has its own
 * path); the valid parts of each body follow the vendor's API reference, as the vendor fakes do.
 */

interface Answer {
  status: number;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
}

type Endpoint = 'chat' | 'stream' | 'embeddings' | 'images';

const UPSTREAM_KEYS = {
  openai: 'sk-test-fake-openai-0123456789',
  gemini: 'fake-gemini-key-0123456789',
  anthropic: 'sk-ant-fake-0123456789',
  vertex: 'ya29.fake-vertex-token-0123456789',
  azure: 'fake-azure-key-0123456789abcdef',
  mistral: 'fake-mistral-key-0123456789',
};
/** An OpenAI-compatible server's key of no known shape: only its value can give it away. */
const LOCAL_KEY = 'local-llm-key-7f3a9c2e5b';
const MODELS = {
  openai: { chat: 'gpt-4o-mini', embeddings: 'text-embedding-3-small', images: 'dall-e-3' },
  gemini: { chat: 'gemini-2.5-flash', embeddings: 'gemini-embedding-001' },
  anthropic: { chat: 'claude-sonnet-4-5' },
  bedrock: { chat: 'bedrock/amazon.nova-pro-v1:0', embeddings: 'bedrock/amazon.titan-embed-text-v2:0' },
  vertex: { chat: 'vertex/gemini-2.5-flash', embeddings: 'vertex/gemini-embedding-001' },
  azure: { chat: 'azure/chat-prod', embeddings: 'azure/embed-prod', images: 'azure/image-prod' },
  mistral: { chat: 'mistral-small-latest', embeddings: 'mistral-embed' },
} as const;
type Provider = keyof typeof MODELS;
/** Vendors whose answers are OpenAI's shape: the body reaches the caller as sent, its usage included. */
const OPENAI_SHAPED = new Set<Provider>(['openai', 'azure', 'mistral']);

/** A value nested 100,000 levels deep: JSON.parse reads it, JSON.stringify overflows its stack. */
const DEEP = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;

const openaiChat = (extra = '', usage = '{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}') =>
  `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":${usage}${extra}}`;
const geminiChat = (part = '{"text":"Hi"}', usage = '{"promptTokenCount":11,"candidatesTokenCount":7,"totalTokenCount":18}') =>
  `{"candidates":[{"content":{"role":"model","parts":[${part}]},"finishReason":"STOP","index":0}],"usageMetadata":${usage},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`;
const converseChat = (block = '{"text":"Hi"}', usage = '{"inputTokens":11,"outputTokens":7,"totalTokens":18}') =>
  `{"output":{"message":{"role":"assistant","content":[${block}]}},"stopReason":"end_turn","usage":${usage},"metrics":{"latencyMs":1}}`;
const anthropicChat = (block = '{"type":"text","text":"Hi"}', usage = '{"input_tokens":11,"output_tokens":7}') =>
  `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[${block}],"stop_reason":"end_turn","stop_sequence":null,"usage":${usage}}`;
const openaiChunk = (choices: string, usage = '') =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":${choices}${usage}}\n\n`;
const TEXT_CHOICE = '[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]';

const json = (body: string, status = 200): Answer => ({ status, body });
const sse = (body: string): Answer => ({ status: 200, body, contentType: 'text/event-stream' });

/** Bodies no vendor documents, sent by every adapter's endpoint with several statuses. */
const JUNK_BODIES = ['', 'not json', 'null', '[]', '"text"', '{}', '{"choices":"x","data":"x","candidates":"x","content":"x"}', DEEP, `{"a":${DEEP}}`, '<html>Moved</html>'];
const JUNK_STATUSES = [200, 201, 204, 301, 307, 404, 503];

let upstream: FakeServer;
let gateway: TestGateway;
let key: string;
let answer: Answer = json('{}');
const records = new RecordTap();

before(async () => {
  upstream = await startFakeServer();
  upstream.on('POST /*', (_request, response) => {
    response.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json', ...answer.headers });
    response.end(answer.status === 204 ? undefined : answer.body);
  });
  gateway = await startTestGateway({
    env: {
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      OPENAI_API_KEY: UPSTREAM_KEYS.openai,
      GEMINI_BASE_URL: upstream.url,
      GEMINI_API_KEY: UPSTREAM_KEYS.gemini,
      ANTHROPIC_BASE_URL: upstream.url,
      ANTHROPIC_API_KEY: UPSTREAM_KEYS.anthropic,
      AWS_REGION: FAKE_AWS.region,
      AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey,
      BEDROCK_BASE_URL: `${upstream.url}/bedrock`,
      GOOGLE_CLOUD_PROJECT: 'hostile-project',
      GOOGLE_CLOUD_LOCATION: 'us-central1',
      VERTEX_ACCESS_TOKEN: UPSTREAM_KEYS.vertex,
      VERTEX_BASE_URL: `${upstream.url}/vertex`,
      AZURE_OPENAI_ENDPOINT: `${upstream.url}/azure`,
      AZURE_OPENAI_API_KEY: UPSTREAM_KEYS.azure,
      MISTRAL_API_KEY: UPSTREAM_KEYS.mistral,
      MISTRAL_BASE_URL: `${upstream.url}/mistral/v1`,
    },
    configFile: {
      providers: {
        compatible: [{ name: 'local', baseUrl: `${upstream.url}/local/v1`, apiKey: LOCAL_KEY, models: [{ id: 'local-model', upstreamId: 'm' }] }],
        azure: { deployments: [{ name: 'chat-prod', model: 'gpt-4o' }, { name: 'embed-prod', model: 'text-embedding-3-small' }, { name: 'image-prod', model: 'dall-e-3' }] },
      },
    },
    routes: [...ROUTE_MODULES, records.routes],
  });
  key = await gateway.createKey({ scopes: ['model:request'] });
});

after(async () => {
  await gateway?.close();
  await upstream?.close();
});

const PATHS: Record<Endpoint, string> = { chat: '/v1/chat/completions', stream: '/v1/chat/completions', embeddings: '/v1/embeddings', images: '/v1/images/generations' };

function requestBody(endpoint: Endpoint, model: string): Record<string, unknown> {
  if (endpoint === 'embeddings') return { model, input: 'Hello' };
  if (endpoint === 'images') return { model, prompt: 'A red square', n: 1 };
  return { model, messages: [{ role: 'user', content: 'Hello' }], ...(endpoint === 'stream' ? { stream: true } : {}) };
}

/** Sends one request with the upstream answering `given`; the gateway's status, text and request id. */
async function send(provider: Provider, endpoint: Endpoint, given: Answer): Promise<{ status: number; text: string; requestId: string }> {
  answer = given;
  const models: Partial<Record<Endpoint, string>> = MODELS[provider];
  const model = models[endpoint === 'stream' ? 'chat' : endpoint];
  assert.ok(model !== undefined, `${provider} serves ${endpoint}`);
  const response = await fetch(`${gateway.url}${PATHS[endpoint]}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(requestBody(endpoint, model)),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id')! };
}

/** Asserts a 502 provider_error in the documented shape, and returns the request's record. */
async function assertProviderError(result: { status: number; text: string; requestId: string }, what: string) {
  assert.equal(result.status, 502, `${what}: ${result.text.slice(0, 300)}`);
  const body = JSON.parse(result.text) as { error: { code: string; type: string; request_id: string } };
  assert.equal(body.error.code, 'provider_error', what);
  assert.equal(body.error.request_id, result.requestId);
  const record = await records.wait(result.requestId);
  assert.equal(record.errorCode, 'provider_error', what);
  return record;
}

const ENDPOINTS: [Provider, Endpoint][] = [
  ['openai', 'chat'],
  ['openai', 'stream'],
  ['openai', 'embeddings'],
  ['openai', 'images'],
  ['gemini', 'chat'],
  ['gemini', 'stream'],
  ['gemini', 'embeddings'],
  ['anthropic', 'chat'],
  ['anthropic', 'stream'],
  ['bedrock', 'chat'],
  ['bedrock', 'stream'],
  ['bedrock', 'embeddings'],
  ['vertex', 'chat'],
  ['vertex', 'stream'],
  ['vertex', 'embeddings'],
  ['azure', 'chat'],
  ['azure', 'stream'],
  ['azure', 'embeddings'],
  ['azure', 'images'],
  ['mistral', 'chat'],
  ['mistral', 'stream'],
  ['mistral', 'embeddings'],
];

describe('answers no vendor documents', () => {
  // A test per adapter, each sending every junk answer with every status to each of its endpoints.
  for (const adapter of new Set(ENDPOINTS.map(([provider]) => provider))) {
    test(`every endpoint of the ${adapter} adapter: the answer or a documented error, never a 500, and the gateway keeps serving`, async () => {
      const failures: string[] = [];
      let sent = 0;
      for (const [provider, endpoint] of ENDPOINTS.filter(([provider]) => provider === adapter)) {
        for (const status of JUNK_STATUSES) {
          for (const body of JUNK_BODIES) {
            const result = await send(provider, endpoint, { status, body });
            sent += 1;
            const what = `${provider} ${endpoint}: upstream ${status} ${JSON.stringify(body.slice(0, 40))}`;
            if (result.status === 200 && status < 300 && endpoint !== 'stream') continue; // e.g. Gemini's `{}`: no candidates, read as a blocked prompt
            const code = result.status === 200 ? null : (JSON.parse(result.text) as { error?: { code?: string } }).error?.code;
            const allowed = result.status === 502 ? code === 'provider_error' : result.status === 400 ? code === 'invalid_body' && status === 404 : false;
            if (!allowed) failures.push(`${what} → ${result.status} ${result.text.slice(0, 120)}`);
          }
        }
      }
      assert.deepEqual(failures, [], `${failures.length} of ${sent} answered wrongly`);
      const healthy = await send('openai', 'chat', json(openaiChat()));
      assert.equal(healthy.status, 200);
    });
  }

  test('a redirect is not an answer: 502, whatever its body, with the status in the log', async () => {
    const moved = { Location: 'https://elsewhere.example/v1/' };
    const cases: [Provider, Endpoint, string][] = [
      ['openai', 'chat', openaiChat()],
      ['openai', 'embeddings', '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}'],
      ['openai', 'images', '{"created":1,"data":[{"url":"https://images.example/1.png"}]}'],
      ['gemini', 'chat', geminiChat()],
      ['anthropic', 'chat', anthropicChat()],
      ['bedrock', 'chat', converseChat()],
      ['vertex', 'chat', geminiChat()],
      ['azure', 'chat', openaiChat()],
      ['mistral', 'chat', openaiChat()],
    ];
    for (const [provider, endpoint, body] of cases) {
      for (const status of [301, 302, 307, 308]) {
        const record = await assertProviderError(await send(provider, endpoint, { status, body, headers: moved }), `${provider} ${endpoint} ${status}`);
        assert.equal(record.logDetail?.upstreamStatus, status, `${provider} ${endpoint} ${status}`);
      }
    }
  });

  test('an OpenAI-compatible answer without the list of objects every client reads (choices, data) is a 502, not a 200 the SDK cannot use', async () => {
    const cases: [Endpoint, string][] = [
      ['chat', '{}'],
      ['chat', '{"id":"chatcmpl-1","object":"chat.completion","choices":"none"}'],
      ['chat', '{"id":"chatcmpl-1","object":"chat.completion","choices":{"0":{}}}'],
      ['embeddings', '{"object":"list","model":"text-embedding-3-small"}'],
      ['embeddings', '{"object":"list","data":"x","usage":{"prompt_tokens":1,"total_tokens":1}}'],
      ['chat', '{"id":"chatcmpl-1","object":"chat.completion","choices":[null]}'],
      ['chat', '{"id":"chatcmpl-1","object":"chat.completion","choices":["Hi"]}'],
      ['images', '{"created":1}'],
      ['images', '{"created":1,"data":{"url":"https://images.example/1.png"}}'],
      ['images', '{"created":1,"data":[null]}'],
      ['images', '{"created":1,"data":[{"url":"https://images.example/1.png"},"https://images.example/2.png"]}'],
    ];
    for (const [endpoint, body] of cases) {
      const record = await assertProviderError(await send('openai', endpoint, json(body)), `${endpoint} ${body}`);
      assert.match(String(record.logDetail?.reason), /is not a JSON object with a "(choices|data)" list/);
    }
  });

  test('an answer nested deeper than JSON.stringify survives is a 502 provider_error, never a 500', async () => {
    const cases: [Provider, Endpoint, string][] = [
      ['openai', 'chat', openaiChat(`,"system_fingerprint":${DEEP}`)],
      ['openai', 'images', `{"created":1,"data":[{"url":"https://images.example/1.png","revised_prompt":${DEEP}}]}`],
      ['gemini', 'chat', geminiChat(`{"functionCall":{"name":"lookup","args":{"q":${DEEP}}}}`)],
      ['gemini', 'embeddings', `{"embeddings":${DEEP}}`],
      ['anthropic', 'chat', anthropicChat(`{"type":"tool_use","id":"toolu_1","name":"lookup","input":{"q":${DEEP}}}`)],
      ['bedrock', 'chat', converseChat(`{"toolUse":{"toolUseId":"tooluse_1","name":"lookup","input":{"q":${DEEP}}}}`)],
      ['vertex', 'chat', geminiChat(`{"functionCall":{"name":"lookup","args":{"q":${DEEP}}}}`)],
      ['azure', 'chat', openaiChat(`,"system_fingerprint":${DEEP}`)],
      ['mistral', 'chat', openaiChat(`,"system_fingerprint":${DEEP}`)],
    ];
    for (const [provider, endpoint, body] of cases) await assertProviderError(await send(provider, endpoint, json(body)), `${provider} ${endpoint}`);
  });
});

describe('token counts the gateway cannot trust', () => {
  // A negative count would hand the key's limits back what it spent; a fraction cannot be priced.
  const cases: [Provider, string, string, { promptTokens: number; completionTokens: number; totalTokens: number } | null][] = [
    ['openai', 'negative', openaiChat('', '{"prompt_tokens":-50,"completion_tokens":-7,"total_tokens":-57}'), null],
    ['openai', 'fractional', openaiChat('', '{"prompt_tokens":12.5,"completion_tokens":7.2,"total_tokens":19.7}'), { promptTokens: 13, completionTokens: 7, totalTokens: 20 }],
    ['openai', 'past 2^53', openaiChat('', '{"prompt_tokens":1e300,"completion_tokens":9007199254740992,"total_tokens":1e300}'), null],
    ['openai', 'a total below the completion', openaiChat('', '{"completion_tokens":5,"total_tokens":1}'), { promptTokens: 0, completionTokens: 5, totalTokens: 1 }],
    ['gemini', 'negative', geminiChat(undefined, '{"promptTokenCount":-50,"candidatesTokenCount":-7,"totalTokenCount":-57}'), null],
    ['gemini', 'fractional', geminiChat(undefined, '{"promptTokenCount":12.5,"candidatesTokenCount":7.2,"thoughtsTokenCount":-3}'), { promptTokens: 13, completionTokens: 7, totalTokens: 20 }],
    ['gemini', 'past 2^53', geminiChat(undefined, '{"promptTokenCount":1e300,"candidatesTokenCount":1e300,"totalTokenCount":1e300}'), null],
    ['anthropic', 'negative', anthropicChat(undefined, '{"input_tokens":-50,"output_tokens":-7}'), null],
    ['anthropic', 'fractional', anthropicChat(undefined, '{"input_tokens":12.5,"output_tokens":7.2,"cache_read_input_tokens":-4}'), { promptTokens: 13, completionTokens: 7, totalTokens: 20 }],
    ['bedrock', 'negative', converseChat(undefined, '{"inputTokens":-50,"outputTokens":-7,"totalTokens":-57}'), null],
    ['bedrock', 'fractional', converseChat(undefined, '{"inputTokens":12.5,"outputTokens":7.2,"cacheReadInputTokens":-4}'), { promptTokens: 13, completionTokens: 7, totalTokens: 20 }],
    ['vertex', 'negative', geminiChat(undefined, '{"promptTokenCount":-50,"candidatesTokenCount":-7,"totalTokenCount":-57}'), null],
    ['azure', 'negative', openaiChat('', '{"prompt_tokens":-50,"completion_tokens":-7,"total_tokens":-57}'), null],
    ['mistral', 'negative', openaiChat('', '{"prompt_tokens":-50,"completion_tokens":-7,"total_tokens":-57}'), null],
  ];
  for (const [provider, name, body, expected] of cases) {
    test(`${provider}, ${name}: the answer is delivered, usage is ${expected === null ? 'not reported' : 'whole numbers'}`, async () => {
      const result = await send(provider, 'chat', json(body));
      assert.equal(result.status, 200, result.text);
      const record = await records.wait(result.requestId);
      if (expected === null) assert.equal(record.usage, null);
      else {
        const { promptTokens, completionTokens, totalTokens } = record.usage ?? {};
        assert.deepEqual({ promptTokens, completionTokens, totalTokens }, expected);
      }
      const shown = (JSON.parse(result.text) as { usage?: Record<string, unknown> }).usage;
      if (!OPENAI_SHAPED.has(provider) && shown !== undefined) for (const value of Object.values(shown)) if (typeof value === 'number') assert.ok(value >= 0 && Number.isInteger(value), JSON.stringify(shown));
    });
  }

  test('streams: negative counts in the last frame are not reported usage', async () => {
    const frames: [Provider, string][] = [
      ['openai', `${openaiChunk(TEXT_CHOICE)}${openaiChunk('[]', ',"usage":{"prompt_tokens":-50,"completion_tokens":-7,"total_tokens":-57}')}data: [DONE]\n\n`],
      ['gemini', `data: ${geminiChat(undefined, '{"promptTokenCount":-50,"candidatesTokenCount":-7,"totalTokenCount":-57}')}\n\n`],
      [
        'anthropic',
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":-50,"output_tokens":-1}}}\n\n' +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n' +
          'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
          'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":-7}}\n\n' +
          'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ],
    ];
    for (const [provider, body] of frames) {
      answer = sse(body);
      const result = await postRawStream(gateway.url, key, { model: MODELS[provider].chat, messages: [{ role: 'user', content: 'Hello' }] });
      assert.equal(result.status, 200, `${provider}: ${result.raw.slice(0, 200)}`);
      assert.equal(result.data.at(-1), '[DONE]', provider);
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.usage, null, provider);
    }
  });
});

describe('a provider that echoes its own key', () => {
  test('is never shown to the caller nor stored, whatever the key looks like', async () => {
    const echoes: [number, string][] = [
      [400, `{"error":{"message":"Invalid API key provided: ${LOCAL_KEY}","type":"invalid_request_error"}}`],
      [401, `{"error":{"message":"Incorrect API key provided: ${LOCAL_KEY}","type":"invalid_request_error"}}`],
      [200, openaiChat(`,"debug":{"authorization":"${LOCAL_KEY}","note":"key ${LOCAL_KEY}"}`)],
    ];
    for (const [status, body] of echoes) {
      answer = json(body, status);
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-model', messages: [{ role: 'user', content: 'Hello' }] }),
      });
      const text = await response.text();
      assert.equal(response.status, status === 401 ? 502 : status, text);
      if (status !== 200) assert.ok(!text.includes(LOCAL_KEY), `the caller's error: ${text}`);
      await records.wait(response.headers.get('x-request-id')!);
      await gateway.gateway.context.logs.writer.flush();
      const logged = await gateway.admin('GET', `/admin/v1/logs/${response.headers.get('x-request-id')!}`);
      assert.equal(logged.status, 200);
      assert.ok(!JSON.stringify(logged.body).includes(LOCAL_KEY), `the log: ${JSON.stringify(logged.body).slice(0, 400)}`);
    }
    assert.ok(upstream.requests.at(-1)?.headers.authorization === `Bearer ${LOCAL_KEY}`, 'the key did reach the provider');
  });
});

describe('what the caller sends, nested deeper than a mapping survives', () => {
  // The adapters that map a request to their vendor's format walk and serialise the caller's
  // tool schemas and tool-call arguments: thousands of levels were a 500 (a stack overflow).
  const nestedSchema = `${'{"type":"object","properties":{"a":'.repeat(20_000)}{"type":"string"}${'}}'.repeat(20_000)}`;
  const nestedArguments = JSON.stringify(`${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`);
  const bodies = (model: string): [string, string][] => [
    ['a tool schema', `{"model":"${model}","messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function","function":{"name":"lookup","parameters":${nestedSchema}}}]}`],
    [
      'tool-call arguments',
      `{"model":"${model}","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":${nestedArguments}}}]},{"role":"tool","tool_call_id":"call_1","content":"42"}]}`,
    ],
  ];

  // A schema 40,000 levels deep is past the body's own depth cap (128) for every adapter;
  // arguments are a string, so only the adapters that parse them meet their depth.
  test('is a 400 invalid_body for the mapping adapters; the OpenAI-compatible one passes nested arguments on as sent, and the depth cap refuses the schema for all', async () => {
    answer = json(openaiChat());
    for (const provider of ['gemini', 'anthropic', 'openai'] as const) {
      for (const [what, body] of bodies(MODELS[provider].chat)) {
        const response = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        });
        const text = await response.text();
        if (provider === 'openai' && what === 'tool-call arguments') {
          assert.equal(response.status, 200, `${provider}, ${what}: ${text.slice(0, 200)}`);
          continue;
        }
        assert.equal(response.status, 400, `${provider}, ${what}: ${text.slice(0, 200)}`);
        assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'invalid_body');
      }
    }
  });
});

describe('transcriptions', () => {
  async function transcribe(given: Answer): Promise<{ status: number; text: string; requestId: string }> {
    answer = given;
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('file', new Blob([Buffer.alloc(64)], { type: 'audio/wav' }), 'a.wav');
    const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    return { status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id')! };
  }

  test('JSON that is not an object comes back as sent (the bytes are passed on), never a 500', async () => {
    for (const body of ['null', '[]', '42', '"text"']) {
      const result = await transcribe(json(body));
      assert.equal(result.status, 200, `${body}: ${result.text}`);
      assert.equal(result.text, body);
      assert.equal((await records.wait(result.requestId)).audioSeconds, null);
    }
  });

  test('a duration the provider reports past a day, or negative, is no duration: the request is still logged', async () => {
    for (const body of ['{"text":"Hi","duration":1e308}', '{"text":"Hi","duration":-5}', '{"text":"Hi","usage":{"type":"duration","seconds":86401}}']) {
      const result = await transcribe(json(body));
      assert.equal(result.status, 200, result.text);
      assert.equal((await records.wait(result.requestId)).audioSeconds, null, body);
      await gateway.gateway.context.logs.writer.flush();
      const logged = await gateway.admin('GET', `/admin/v1/logs/${result.requestId}`);
      assert.equal(logged.status, 200, `${body}: the request has its log row`);
    }
    const counted = await transcribe(json('{"text":"Hi","usage":{"type":"duration","seconds":86400}}'));
    assert.equal((await records.wait(counted.requestId)).audioSeconds, 86_400);
  });
});

describe('a stream whose usage chunk cannot be written again', () => {
  test('still ends, with a usage chunk built from the counts, for a caller that asked for usage', async () => {
    answer = sse(`${openaiChunk(TEXT_CHOICE)}${openaiChunk('[]', `,"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18},"extra":${DEEP}`)}data: [DONE]\n\n`);
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.openai.chat, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] }),
      // Before the fix the stream never ended: the relay threw while writing the usage chunk.
      signal: AbortSignal.timeout(5_000),
    });
    const frames = (await response.text()).split('\n\n').filter((frame) => frame.length > 0);
    assert.equal(frames.at(-1), 'data: [DONE]');
    const usageChunk = JSON.parse(frames.at(-2)!.slice('data: '.length)) as Record<string, unknown>;
    assert.deepEqual(usageChunk, {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: MODELS.openai.chat,
      choices: [],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    });
  });
});

describe('a stream longer than the log keeps', () => {
  test('its transcript holds no more text than the log stores, nor more than 128 choices', async () => {
    // 640 deltas of 512 characters (320 KiB) against the default logs.maxPayloadBytes of 256 KiB.
    const delta = 'The tide rolls in. '.repeat(27).slice(0, 512);
    const frames = Array.from({ length: 640 }, () => openaiChunk(`[{"index":0,"delta":{"content":${JSON.stringify(delta)}},"finish_reason":null}]`));
    const extraChoices = Array.from({ length: 200 }, (_, index) => openaiChunk(`[{"index":${index + 1},"delta":{"content":"x"},"finish_reason":"stop"}]`));
    answer = sse(`${frames.join('')}${extraChoices.join('')}data: [DONE]\n\n`);
    const result = await postRawStream(gateway.url, key, { model: MODELS.openai.chat, messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(result.status, 200);
    assert.equal(result.data.length, 640 + 200 + 1, 'the caller gets every frame');
    const record = await records.wait(result.headers.get('x-request-id')!);
    const transcript = record.responsePayload as { choices: { index: number; content: string }[]; characters_not_kept: number };
    const limit = gateway.config.logs.maxPayloadBytes;
    assert.equal(transcript.choices[0]!.content, delta.repeat(640).slice(0, limit));
    assert.equal(transcript.choices.length, 128);
    // Past the limit every character is counted, not kept: the rest of choice 0 and all of the others'.
    assert.equal(transcript.characters_not_kept, 640 * 512 - limit + 200);
  });
});

describe('stream frames of the wrong kind', () => {
  test('choices that are not a list of objects: before the first event a 502, after it an error chunk; never a crash', async () => {
    for (const choices of ['[null]', '[5]', '"x"', '{"index":0}', '[[]]']) {
      answer = sse(`${openaiChunk(choices)}data: [DONE]\n\n`);
      await assertProviderError(await send('openai', 'stream', answer), `first frame with choices ${choices}`);

      answer = sse(`${openaiChunk(TEXT_CHOICE)}${openaiChunk(choices)}${openaiChunk(TEXT_CHOICE)}data: [DONE]\n\n`);
      const result = await postRawStream(gateway.url, key, { model: MODELS.openai.chat, messages: [{ role: 'user', content: 'Hello' }] });
      assert.equal(result.status, 200);
      assert.equal(result.data.length, 2, `the good frame, then the error chunk (no [DONE]): ${result.raw}`);
      assert.equal((JSON.parse(result.data[1]!) as { error: { code: string } }).error.code, 'provider_error');
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.errorCode, 'provider_error');
    }
    const healthy = await send('openai', 'chat', json(openaiChat()));
    assert.equal(healthy.status, 200);
  });

  test('a Gemini candidate index no caller could ask for (negative, 128 and past) is a 502, not a choice; a stream keeps no state for it', async () => {
    for (const index of ['-1', '128', '1000000000']) {
      const candidate = geminiChat().replace('"index":0', `"index":${index}`);
      await assertProviderError(await send('gemini', 'chat', json(candidate)), `chat with candidate index ${index}`);
      await assertProviderError(await send('gemini', 'stream', sse(`data: ${candidate}\n\n`)), `stream with candidate index ${index}`);
    }
    const highest = await send('gemini', 'chat', json(geminiChat().replace('"index":0', '"index":127')));
    assert.equal(highest.status, 200);
    assert.equal((JSON.parse(highest.text) as { choices: { index: number }[] }).choices[0]!.index, 127);
  });
});
