import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI, type Content } from '@google/genai';
import { VENDORS, type RunningVendor } from './helpers/format-vendors.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { candidateResponse, FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';

/*
 * The Gemini API surface driven by Google's own SDK (@google/genai), unchanged but for its base
 * URL and the gateway key as its API key: generateContent, generateContentStream, a function-call
 * round trip, countTokens, embedContent and models.list, against a model of each vendor (their
 * fakes). Google's models get the body as sent; the others a translation.
 */

const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function clientOf(gateway: TestGateway, key: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url, retryOptions: { attempts: 1 } } });
}

const USAGE = { input: 20, output: 9, cached: 8, reasoning: 0 };

for (const vendor of VENDORS) {
  describe(`@google/genai × ${vendor.name}`, () => {
    let fake: RunningVendor;
    let gateway: TestGateway;
    let client: GoogleGenAI;
    before(async () => {
      fake = await vendor.start();
      gateway = await startTestGateway(fake.gateway);
      client = clientOf(gateway, await gateway.createKey({ scopes: ['model:request'] }));
    });
    after(async () => {
      await gateway?.close();
      await fake?.close();
    });

    test('generateContent: the text, finish reason, usage and the caller\'s model; logged with its usage', async () => {
      fake.answer({ kind: 'text', pieces: ['Hello', ' there.'], finish: 'stop', usage: USAGE });
      const response = await client.models.generateContent({ model: vendor.model, contents: 'Say hello.', config: { systemInstruction: 'Be brief.', temperature: 0.2 } });
      assert.equal(response.text, 'Hello there.');
      assert.equal(response.candidates?.[0]?.finishReason, 'STOP');
      assert.equal(response.usageMetadata?.promptTokenCount, USAGE.input);
      assert.equal((response.usageMetadata?.candidatesTokenCount ?? 0) + (response.usageMetadata?.thoughtsTokenCount ?? 0), USAGE.output);
      const requestId = response.sdkHttpResponse?.headers?.['x-request-id'];
      assert.ok(requestId !== undefined);
      const record = await loggedRecord(gateway, requestId);
      assert.equal(record.usage?.prompt_tokens, USAGE.input);
      assert.match(record.endpoint, /^\/v1beta\/models\/\{model\}:generateContent$/);
    });

    test('generateContentStream: the pieces assemble to the answer, the last with its finish reason and usage', async () => {
      fake.answer({ kind: 'text', pieces: ['Once', ' upon', ' a time.'], finish: 'stop', usage: USAGE });
      let text = '';
      let finish: string | undefined;
      let prompt: number | undefined;
      for await (const chunk of await client.models.generateContentStream({ model: vendor.model, contents: 'A story?' })) {
        text += chunk.text ?? '';
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
        prompt = chunk.usageMetadata?.promptTokenCount ?? prompt;
      }
      assert.equal(text, 'Once upon a time.');
      assert.equal(finish, 'STOP');
      assert.equal(prompt, USAGE.input);
    });

    test('a function call round trip: the call comes back whole, its response reaches the provider for that call', async () => {
      fake.answer({ kind: 'tool-call', id: 'call_Wx7dQ2', name: 'get_weather', arguments: { city: 'Paris' }, usage: USAGE });
      const tools = [{ functionDeclarations: [WEATHER] }];
      const first = await client.models.generateContent({ model: vendor.model, contents: 'Weather in Paris?', config: { tools } });
      const call = first.functionCalls?.[0];
      assert.equal(call?.name, 'get_weather');
      assert.deepEqual(call?.args, { city: 'Paris' });
      fake.answer({ kind: 'text', pieces: ['Sunny, 21 °C.'], finish: 'stop', usage: USAGE });
      const contents: Content[] = [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        first.candidates![0]!.content!,
        { role: 'user', parts: [{ functionResponse: { id: call?.id, name: 'get_weather', response: { sky: 'sunny', celsius: 21 } } }] },
      ];
      const second = await client.models.generateContent({ model: vendor.model, contents, config: { tools } });
      assert.equal(second.text, 'Sunny, 21 °C.');
      assert.equal(fake.lastToolResultRef(), vendor.toolCallIds ? 'call_Wx7dQ2' : 'get_weather');
    });

    test("earlier turns' thought signatures and thoughts: Google's model gets them as sent, another vendor neither, and nothing is named dropped", async () => {
      const signature = Buffer.from('an opaque thought signature of Gemini').toString('base64');
      fake.answer({ kind: 'text', pieces: ['Sunny.'], finish: 'stop', usage: USAGE });
      const contents: Content[] = [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ text: 'Thinking about the weather tool.', thought: true }, { functionCall: { id: 'call_Wx7dQ2', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: signature }] },
        { role: 'user', parts: [{ functionResponse: { id: 'call_Wx7dQ2', name: 'get_weather', response: { sky: 'sunny' } } }] },
        { role: 'model', parts: [{ text: 'It is sunny.', thoughtSignature: signature }] },
        { role: 'user', parts: [{ text: 'And tomorrow?' }] },
      ];
      const response = await client.models.generateContent({ model: vendor.model, contents, config: { tools: [{ functionDeclarations: [WEATHER] }] } });
      assert.equal(response.text, 'Sunny.');
      const sent = JSON.stringify(fake.lastBody());
      const native = ['Gemini', 'Google Vertex AI (Gemini)'].includes(vendor.name);
      assert.equal(sent.includes(signature), native, 'the signature reaches Google only');
      assert.equal(sent.includes('Thinking about the weather tool.'), native, "the thought reaches Google only");
      assert.ok(sent.includes('It is sunny.'), "the earlier answer's text reaches every vendor");
      assert.equal(response.sdkHttpResponse?.headers?.['x-modelgate-dropped'], undefined);
    });

    test('a provider failure is an ApiError with Google\'s shape and the gateway\'s status', async () => {
      fake.fail(400, 'the conversation is too long for this model');
      await assert.rejects(client.models.generateContent({ model: vendor.model, contents: 'Hi' }), (error: unknown) => {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.status, 400);
        const body = JSON.parse(error.message) as { error: { code: number; status: string; message: string } };
        assert.equal(body.error.code, 400);
        assert.equal(body.error.status, 'INVALID_ARGUMENT');
        assert.match(body.error.message, /too long/);
        return true;
      });
    });

    test('countTokens answers a count and calls no model', async () => {
      const before = fake.received();
      const counted = await client.models.countTokens({ model: vendor.model, contents: 'How many tokens is this?' });
      assert.ok(typeof counted.totalTokens === 'number' && counted.totalTokens > 0);
      // Google's own count goes to its countTokens; the others are estimated or counted by their own endpoint.
      assert.ok(fake.received() - before <= 1);
    });
  });
}

describe('@google/genai: keys, models and embeddings', () => {
  let fake: FakeGemini;
  let openai: OpenAIFake;
  let gateway: TestGateway;
  let key: string;
  before(async () => {
    fake = await startFakeGemini();
    openai = await startOpenAIFake();
    gateway = await startTestGateway({ env: { GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: FAKE_GEMINI_KEY, OPENAI_BASE_URL: `${openai.server.url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' } });
    key = await gateway.createKey({ scopes: ['model:request'] });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
    await openai?.server.close();
  });

  test("a Google model gets the body as sent — a field the gateway does not know included — with the gateway's credential", async () => {
    fake.reply('chat', { response: candidateResponse([{ text: 'Native.' }]) });
    const body = { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] };
    const response = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent?key=${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(response.status, 200, await response.clone().text());
    const last = fake.last('generateContent')!;
    assert.deepEqual(last.json, body);
    assert.equal(last.headers['x-goog-api-key'], FAKE_GEMINI_KEY);
    assert.equal(response.headers.get('x-modelgate-dropped'), null);
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.ok(!JSON.stringify(record).includes(key), 'the key in the query is not in the log');
  });

  test('without alt=sse the stream is one JSON array of responses', async () => {
    const response = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
      body: JSON.stringify({ contents: [{ parts: [{ text: 'Hi' }] }] }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const frames = (await response.json()) as { candidates: unknown[] }[];
    assert.ok(Array.isArray(frames) && frames.length > 0 && Array.isArray(frames[0]!.candidates));
  });

  test("errors are in Google's shape: no key, a bad key, an unknown path", async () => {
    // Both key refusals say where the Gemini API's clients send the key.
    const keyPlaces = (message: string) => /"x-goog-api-key: sk-mg-…"/.test(message) && /"\?key=sk-mg-…" in the URL/.test(message) && /"Authorization: Bearer sk-mg-…"/.test(message);
    const none = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"contents":[]}' });
    assert.equal(none.status, 401);
    const refused = ((await none.json()) as { error: { code: number; status: string; message: string } }).error;
    assert.equal(refused.status, 'UNAUTHENTICATED');
    assert.equal(refused.code, 401);
    assert.ok(keyPlaces(refused.message), refused.message);
    const client = new GoogleGenAI({ apiKey: 'sk-mg-not-a-key-000000000000000000000000', httpOptions: { baseUrl: gateway.url, retryOptions: { attempts: 1 } } });
    await assert.rejects(client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' }), (error: unknown) => {
      assert.ok(error instanceof ApiError && error.status === 401, String(error));
      const body = JSON.parse(error.message) as { error: { status: string; message: string } };
      assert.equal(body.error.status, 'UNAUTHENTICATED');
      assert.ok(keyPlaces(body.error.message), body.error.message);
      return true;
    });
    // The chat completions path names only the places every route reads.
    const chat = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const chatMessage = ((await chat.json()) as { error: { message: string } }).error.message;
    assert.doesNotMatch(chatMessage, /x-goog-api-key/);
    const unknown = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:predictLong`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error: { status: string } }).error.status, 'NOT_FOUND');
  });

  test('models.list pages through the chat and embedding models in Google\'s shape; models.get reads one', async () => {
    const client = clientOf(gateway, key);
    const names: string[] = [];
    const pager = await client.models.list({ config: { pageSize: 5 } });
    for await (const model of pager) names.push(model.name ?? '');
    assert.ok(names.length > 5, 'more than one page');
    assert.equal(new Set(names).size, names.length, 'no model twice');
    assert.ok(names.includes('models/gemini-2.5-flash') && names.includes('models/claude-sonnet-4-5'));
    const one = await client.models.get({ model: 'gpt-4o-mini' });
    assert.equal(one.name, 'models/gpt-4o-mini');
    assert.ok(one.supportedActions?.includes('generateContent'));
    const openai = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { object?: string };
    assert.equal(openai.object, 'list', 'GET /v1/models without a Google header stays OpenAI\'s');
  });

  test("a key's allowed models hold on these paths: another model is Google's 403", async () => {
    const limited = await gateway.createKey({ scopes: ['model:request'], allowedModels: ['gpt-4o-mini'] });
    const client = clientOf(gateway, limited);
    await assert.rejects(client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' }), (error: unknown) => {
      assert.ok(error instanceof ApiError && error.status === 403, String(error));
      assert.equal((JSON.parse(error.message) as { error: { status: string } }).error.status, 'PERMISSION_DENIED');
      return true;
    });
  });

  test("the dashboard's log filter lists the Gemini API's endpoints", async () => {
    const { status, body } = await gateway.admin('GET', '/admin/v1/endpoints');
    assert.equal(status, 200);
    assert.ok(body.data.includes('/v1beta/models/{model}:generateContent') && body.data.includes('/v1/chat/completions'), JSON.stringify(body.data));
  });

  test('models.list shows every catalog model of every vendor, each with the methods these paths serve for its mode', async () => {
    const catalog = ((await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: { id: string; mode: string; owned_by: string }[] }).data;
    const listed = new Map<string, string[]>();
    for await (const model of await clientOf(gateway, key).models.list({ config: { pageSize: 40 } })) listed.set(model.name ?? '', model.supportedActions ?? []);
    assert.equal(listed.size, catalog.length, 'as many models as GET /v1/models');
    const methods: Record<string, string[]> = { chat: ['generateContent', 'streamGenerateContent', 'countTokens'], embedding: ['embedContent', 'batchEmbedContents'] };
    for (const entry of catalog) assert.deepEqual(listed.get(`models/${entry.id}`), methods[entry.mode] ?? [], `${entry.id} (${entry.mode})`);
    for (const vendor of ['openai', 'anthropic', 'google']) assert.ok(catalog.some((entry) => entry.owned_by === vendor && entry.mode === 'chat'), vendor);
    const modes = new Set(catalog.map((entry) => entry.mode));
    assert.ok(modes.has('embedding') && modes.size > 2, `chat, embedding and other modes: ${[...modes].join(', ')}`);
    // models.get reads any of them, an image model too (it serves none of these methods).
    const image = catalog.find((entry) => entry.mode === 'image_generation')!;
    assert.deepEqual((await clientOf(gateway, key).models.get({ model: image.id })).supportedActions ?? [], []);
    const embedding = await clientOf(gateway, key).models.get({ model: 'text-embedding-3-small' });
    assert.deepEqual(embedding.supportedActions, ['embedContent', 'batchEmbedContents']);
    await assert.rejects(clientOf(gateway, key).models.get({ model: 'no-such-model' }), (error: unknown) => error instanceof ApiError && error.status === 404);
  });

  for (const [model, vendor] of [
    ['gemini-embedding-001', 'Google'],
    ['text-embedding-3-small', 'OpenAI'],
  ] as const) {
    test(`embedContent (the SDK's batchEmbedContents, and one content) on ${model}: ${vendor}'s embeddings, in order, logged with usage`, async () => {
      const client = clientOf(gateway, key);
      const response = await client.models.embedContent({ model, contents: ['first text', 'second text', 'third'], config: { outputDimensionality: 4 } });
      assert.equal(response.embeddings?.length, 3);
      assert.ok(response.embeddings.every((embedding) => embedding.values?.length === 4));
      // The fakes make each vector from its input's position: the first's first value is the smallest.
      assert.ok(response.embeddings[0]!.values![0]! < response.embeddings[2]!.values![0]!, 'in the requests\' order');
      const one = await fetch(`${gateway.url}/v1beta/models/${model}:embedContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
        body: JSON.stringify({ content: { parts: [{ text: 'only' }, { text: 'one' }] }, outputDimensionality: 4, taskType: 'RETRIEVAL_QUERY' }),
      });
      assert.equal(one.status, 200, await one.clone().text());
      const answer = (await one.json()) as { embedding: { values: number[] } };
      assert.equal(answer.embedding.values.length, 4);
      const record = await loggedRecord(gateway, one.headers.get('x-request-id')!);
      assert.equal(record.endpoint, '/v1beta/models/{model}:embedContent');
      assert.equal(record.status, 200);
      if (vendor === 'OpenAI') {
        const sent = openai.server.requests.filter((request) => request.path === '/v1/embeddings').at(-1)!.json as { input: string[]; model: string; dimensions: number };
        assert.deepEqual(sent.input, ['only one']);
        assert.equal(sent.dimensions, 4);
        assert.equal(one.headers.get('x-modelgate-dropped'), 'taskType');
        assert.ok(record.usage?.prompt_tokens > 0, JSON.stringify(record.usage));
      }
    });
  }
});
