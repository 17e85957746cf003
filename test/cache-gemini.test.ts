import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleGenAI } from '@google/genai';
import { candidateResponse, FAKE_GEMINI_KEY, startFakeGemini, textFrames, type FakeGemini } from './fakes/gemini.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The response cache on the Gemini API, through Google's own SDK (@google/genai) and plain
 * fetch for the framing: generateContent and streamGenerateContent (server-sent events and the
 * streamed JSON array) for a Google model (the body as sent) and a translated one, embedContent,
 * and the caller's controls in headers.
 */

const GEMINI = 'gemini-2.5-flash';
const GPT = 'gpt-4o-mini';
const USAGE = { promptTokens: 12, completionTokens: 4 };

describe('response cache: Gemini API', () => {
  let gemini: FakeGemini;
  let openaiFake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;
  let client: GoogleGenAI;
  let question = 0;

  before(async () => {
    gemini = await startFakeGemini();
    openaiFake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: FAKE_GEMINI_KEY, OPENAI_BASE_URL: `${openaiFake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cache-test' },
      configFile: { cache: [{ name: 'everything', apply: { all: true } }] },
    });
    key = await gateway.createKey({ scopes: ['model:request'] });
    client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url, retryOptions: { attempts: 1 } } });
  });
  after(async () => {
    await gateway?.close();
    await gemini?.close();
    await openaiFake?.server.close();
  });
  beforeEach(() => {
    question += 1;
    gemini.reply('generateContent', { response: candidateResponse([{ text: 'Paris.' }], { usage: USAGE }) });
    gemini.reply('streamGenerateContent', { frames: textFrames(['Par', 'is', '.'], USAGE) });
    openaiFake.scriptChat({ kind: 'reply', text: 'Paris.', usage: { promptTokens: 12, completionTokens: 2 } });
  });

  const text = () => `What is the capital of France? (#${question})`;
  const calls = (method: string) => gemini.requests.filter((request) => request.path.includes(`:${method}`)).length;
  const deterministic = { temperature: 0 };

  function post(model: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${gateway.url}/v1beta/models/${model}:${method}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key, ...headers }, body: JSON.stringify(body) });
  }
  const bodyOf = () => ({ contents: [{ role: 'user', parts: [{ text: text() }] }], generationConfig: deterministic });

  test("a Google model: generateContent twice, one provider call; the hit is the same answer and its record names the original", async () => {
    const before = calls('generateContent');
    const first = await client.models.generateContent({ model: GEMINI, contents: text(), config: deterministic });
    const second = await client.models.generateContent({ model: GEMINI, contents: text(), config: deterministic });
    assert.equal(first.sdkHttpResponse?.headers?.['x-modelgate-cache'], 'miss');
    assert.equal(second.sdkHttpResponse?.headers?.['x-modelgate-cache'], 'hit');
    assert.equal(second.sdkHttpResponse?.headers?.['x-modelgate-attempts'], '0');
    assert.equal(calls('generateContent') - before, 1);
    assert.equal(second.text, 'Paris.');
    assert.deepEqual(second.candidates, first.candidates);
    assert.equal(second.modelVersion, GEMINI);
    const record = await loggedRecord(gateway, second.sdkHttpResponse!.headers!['x-request-id']!);
    assert.equal(record.detail.cache.source_request_id, first.sdkHttpResponse!.headers!['x-request-id']);
    assert.equal(record.cost_usd, 0);
  });

  test('a Google model: generateContentStream (alt=sse) is replayed frame for frame through the SDK', async () => {
    const before = calls('streamGenerateContent');
    const read = async () => {
      const pieces: string[] = [];
      let finish: string | undefined;
      for await (const chunk of await client.models.generateContentStream({ model: GEMINI, contents: text(), config: deterministic })) {
        pieces.push(chunk.text ?? '');
        finish = chunk.candidates?.[0]?.finishReason ?? finish;
      }
      return { pieces, finish };
    };
    const live = await read();
    const replayed = await read();
    assert.equal(calls('streamGenerateContent') - before, 1);
    assert.deepEqual(replayed.pieces, live.pieces);
    assert.equal(replayed.pieces.join(''), 'Paris.');
    assert.equal(replayed.finish, 'STOP');
  });

  test("a stream without alt=sse is replayed as Google's streamed JSON array; the SSE form of the same request shares the entry", async () => {
    const before = calls('streamGenerateContent');
    const sse = await post(GEMINI, 'streamGenerateContent?alt=sse', bodyOf());
    assert.equal(sse.headers.get('x-modelgate-cache'), 'miss');
    const events = (await sse.text()).split(/\r?\n\r?\n/).filter((frame) => frame.startsWith('data: '));
    const array = await post(GEMINI, 'streamGenerateContent', bodyOf());
    assert.equal(array.headers.get('x-modelgate-cache'), 'hit');
    assert.match(array.headers.get('content-type') ?? '', /application\/json/);
    const frames = (await array.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    assert.equal(frames.length, events.length);
    assert.equal(frames.map((frame) => frame.candidates[0]!.content.parts[0]!.text).join(''), 'Paris.');
    assert.equal(calls('streamGenerateContent') - before, 1);
  });

  test('a translated model (OpenAI): generateContent and its stream from the cache', async () => {
    const before = openaiFake.chatRequests().length;
    const first = await client.models.generateContent({ model: GPT, contents: text(), config: deterministic });
    const second = await client.models.generateContent({ model: GPT, contents: text(), config: deterministic });
    assert.equal(second.sdkHttpResponse?.headers?.['x-modelgate-cache'], 'hit');
    assert.equal(second.text, first.text);
    const stream = async () => {
      let answer = '';
      for await (const chunk of await client.models.generateContentStream({ model: GPT, contents: text(), config: deterministic })) answer += chunk.text ?? '';
      return answer;
    };
    const live = await stream();
    assert.equal(await stream(), live);
    assert.equal(openaiFake.chatRequests().length - before, 2);
  });

  test('controls: bypass and Cache-Control: no-store leave the cache out; refresh answers anew; a temperature above 0 is left out', async () => {
    const before = calls('generateContent');
    assert.equal((await post(GEMINI, 'generateContent', bodyOf())).headers.get('x-modelgate-cache'), 'miss');
    assert.equal((await post(GEMINI, 'generateContent', bodyOf(), { 'x-modelgate-cache': 'bypass' })).headers.get('x-modelgate-cache'), 'bypass');
    assert.equal((await post(GEMINI, 'generateContent', bodyOf(), { 'cache-control': 'no-store' })).headers.get('x-modelgate-cache'), 'bypass');
    assert.equal((await post(GEMINI, 'generateContent', bodyOf(), { 'x-modelgate-cache': 'refresh' })).headers.get('x-modelgate-cache'), 'miss');
    assert.equal((await post(GEMINI, 'generateContent', bodyOf())).headers.get('x-modelgate-cache'), 'hit');
    assert.equal(calls('generateContent') - before, 4);
    const warm = { ...bodyOf(), generationConfig: { temperature: 0.7 } };
    assert.equal((await post(GEMINI, 'generateContent', warm)).headers.get('x-modelgate-cache'), 'bypass');
    const wrong = await post(GEMINI, 'generateContent', bodyOf(), { 'x-modelgate-cache': 'sometimes' });
    assert.equal(wrong.status, 400);
    assert.equal(((await wrong.json()) as { error: { status: string } }).error.status, 'INVALID_ARGUMENT');
  });

  test('embedContent: the same content is embedded once; the hit has the same values', async () => {
    const before = calls('batchEmbedContents');
    const ask = () => client.models.embedContent({ model: 'gemini-embedding-001', contents: [text()], config: { outputDimensionality: 4 } });
    const first = await ask();
    const second = await ask();
    assert.equal(calls('batchEmbedContents') - before, 1);
    assert.deepEqual(second.embeddings, first.embeddings);
    const single = await post('gemini-embedding-001', 'embedContent', { content: { parts: [{ text: text() }] } });
    assert.equal(single.headers.get('x-modelgate-cache'), 'miss', 'embedContent and batchEmbedContents are entries of their own');
    assert.equal((await post('gemini-embedding-001', 'embedContent', { content: { parts: [{ text: text() }] } })).headers.get('x-modelgate-cache'), 'hit');
  });
});
