import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { createCacheStore, type CacheStore } from '../src/cache/index.js';
import { encodeVector, nearest } from '../src/cache/semantic.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The semantic cache: the last user turn embedded through the gateway (the embedding vendor's
 * fake answers the vectors each test chooses, in OpenAI's documented embeddings shape), the
 * nearest kept turn above the threshold, the rest of the conversation required equal, namespaces
 * apart, vectors bounded per namespace, and two instances sharing Redis.
 */

const REDIS_URL = process.env.TEST_REDIS_URL;
const NO_REDIS = REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false;
const THRESHOLD = 0.95;
const POLICY = { name: 'class-semantic', apply: { projects: ['sem-101', 'sem-102'] }, mode: 'semantic', semantic: { embeddingModel: 'text-embedding-3-small', threshold: THRESHOLD } };

/** A unit vector at `degrees` from [1, 0, 0, 0] in the first plane, rotated into the plane `plane` (so tests do not meet each other's). */
function vectorAt(plane: number, degrees: number): number[] {
  const radians = (degrees * Math.PI) / 180;
  const vector = new Array<number>(8).fill(0);
  vector[plane % 4] = Math.cos(radians);
  vector[4 + (plane % 4)] = Math.sin(radians);
  return vector;
}

/** The next embeddings call answers this vector (OpenAI's embeddings list). */
function embedsAs(fake: OpenAIFake, vector: number[]): void {
  fake.answerNext('/v1/embeddings', JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: vector }], model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } }));
}

function gatewayEnv(fake: OpenAIFake): Record<string, string> {
  return { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cache-test' };
}

describe('semantic cache over chat completions', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let client: OpenAI;
  let otherProject: OpenAI;
  let plane = 0;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: gatewayEnv(fake), configFile: { cache: [POLICY] } });
    await gateway.gateway.context.keys.projects.create('sem-101');
    await gateway.gateway.context.keys.projects.create('sem-102');
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId: 'sem-101' }), maxRetries: 0 });
    otherProject = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId: 'sem-102' }), maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.server.close();
  });
  beforeEach(() => {
    plane += 1;
    fake.scriptChat({ kind: 'reply', text: 'Paris.', usage: { promptTokens: 12, completionTokens: 2 } });
  });

  const chatCalls = () => fake.chatRequests().length;
  const embeddingCalls = () => fake.server.requests.filter((request) => request.path === '/v1/embeddings').length;

  async function ask(sdk: OpenAI, question: string, vector: number[], system = 'Answer in one word.') {
    embedsAs(fake, vector);
    const messages = [
      { role: 'system' as const, content: system },
      { role: 'user' as const, content: question },
    ];
    const { data, response } = await sdk.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages }).withResponse();
    return { data, cache: response.headers.get('x-modelgate-cache'), similarity: response.headers.get('x-modelgate-cache-similarity'), requestId: response.headers.get('x-request-id')! };
  }

  test('a turn above the threshold is a hit with its similarity; the record marks it semantic and names the source', async () => {
    const chats = chatCalls();
    const embeddings = embeddingCalls();
    const first = await ask(client, `What is the capital of France? (${plane})`, vectorAt(plane, 0));
    assert.equal(first.cache, 'miss');
    // cos 10° ≈ 0.985, above 0.95.
    const second = await ask(client, `Which city is France's capital? (${plane})`, vectorAt(plane, 10));
    assert.equal(second.cache, 'hit');
    assert.equal(Number(second.similarity).toFixed(3), Math.cos((10 * Math.PI) / 180).toFixed(3));
    assert.equal(second.data.choices[0]!.message.content, 'Paris.');
    assert.equal(chatCalls() - chats, 1, 'the provider answered once');
    assert.equal(embeddingCalls() - embeddings, 2, 'each turn was embedded once');
    const record = await loggedRecord(gateway, second.requestId);
    assert.equal(record.detail.cache.hit, true);
    assert.equal(record.detail.cache.semantic, true);
    assert.equal(record.detail.cache.source_request_id, first.requestId);
    assert.ok(Math.abs(record.detail.cache.similarity - Math.cos((10 * Math.PI) / 180)) < 1e-3);
    assert.equal(record.resolved_model, 'gpt-4o-mini');
  });

  test('a turn below the threshold is a miss, answered by the provider', async () => {
    await ask(client, `What is the capital of Italy? (${plane})`, vectorAt(plane, 0));
    const chats = chatCalls();
    // cos 25° ≈ 0.906, below 0.95.
    const near = await ask(client, `What is the capital of Spain? (${plane})`, vectorAt(plane, 25));
    assert.equal(near.cache, 'miss');
    assert.equal(near.similarity, null);
    assert.equal(chatCalls() - chats, 1);
  });

  test('the rest of the conversation must be equal: another system prompt with the same turn vector is a miss', async () => {
    await ask(client, `Capital of Portugal? (${plane})`, vectorAt(plane, 0));
    const other = await ask(client, `Capital of Portugal, please? (${plane})`, vectorAt(plane, 0), 'Answer in French.');
    assert.equal(other.cache, 'miss');
  });

  test("another project never gets the answer, whatever vector its turn has", async () => {
    await ask(client, `Capital of Greece? (${plane})`, vectorAt(plane, 0));
    const other = await ask(otherProject, `Capital of Greece? (${plane})`, vectorAt(plane, 0));
    assert.equal(other.cache, 'miss');
    const again = await ask(otherProject, `Capital of Greece? (${plane})`, vectorAt(plane, 0));
    assert.equal(again.cache, 'hit', 'the exact request is an exact hit within its own project');
    assert.equal(again.similarity, null);
  });

  test('a failed embedding leaves the request a miss, answered by the provider', async () => {
    fake.failNext('/v1/embeddings', 500, 'embedding backend down');
    const chats = chatCalls();
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: `Capital of Peru? (${plane})` }] }).withResponse();
    assert.equal(response.headers.get('x-modelgate-cache'), 'miss');
    assert.equal(data.choices[0]!.message.content, 'Paris.');
    assert.equal(chatCalls() - chats, 1);
  });
});

const STORES: [string, () => Promise<CacheStore>, string | false][] = [
  ['memory', () => createCacheStore({ redisUrl: undefined, keyPrefix: '', commandTimeoutMs: 1000 }), false],
  ['Redis', () => createCacheStore({ redisUrl: REDIS_URL, keyPrefix: `mg-cache-test-${randomBytes(6).toString('hex')}:`, commandTimeoutMs: 5_000 }), NO_REDIS],
];

for (const [name, open, skip] of STORES) {
  describe(`semantic vectors in the ${name} store`, { skip }, () => {
    let store: CacheStore;
    before(async () => {
      store = await open();
    });
    after(async () => {
      await store?.clear();
      await store?.close();
    });

    test('bounded per namespace, least recently used out; other prefixes and namespaces apart; cleared with the namespace', async () => {
      const vector = encodeVector(vectorAt(0, 0));
      for (const key of ['a', 'b', 'c']) await store.addVector('project:p1', 'prefix-1', { key, vector }, 60_000, 2);
      await store.addVector('project:p1', 'prefix-2', { key: 'x', vector }, 60_000, 3);
      await store.addVector('project:p2', 'prefix-1', { key: 'y', vector }, 60_000, 3);
      const keys = async (prefix: string) => (await store.vectors('project:p1', prefix)).map((entry) => entry.key).sort();
      assert.deepEqual(await keys('prefix-1'), ['b', 'c']);
      assert.deepEqual(await keys('prefix-2'), ['x']);
      // b used again: c is now the least recently used of the namespace.
      await store.addVector('project:p1', 'prefix-1', { key: 'b', vector }, 60_000, 3);
      await store.addVector('project:p1', 'prefix-1', { key: 'd', vector }, 60_000, 3);
      assert.deepEqual(await keys('prefix-1'), ['b', 'd']);
      assert.deepEqual(await keys('prefix-2'), ['x']);
      assert.deepEqual((await store.vectors('project:p2', 'prefix-1')).map((entry) => entry.key), ['y']);
      await store.clear('project:p1');
      assert.deepEqual(await store.vectors('project:p1', 'prefix-2'), []);
      assert.equal((await store.vectors('project:p2', 'prefix-1')).length, 1);
    });
  });
}

test('nearest: the most similar candidate at or above the threshold, over many slices of candidates', async () => {
  const candidates = Array.from({ length: 1000 }, (_, index) => ({ key: `k${index}`, vector: encodeVector(vectorAt(0, 30 + (index % 50))) }));
  candidates[777] = { key: 'best', vector: encodeVector(vectorAt(0, 5)) };
  const found = await nearest(candidates, encodeVector(vectorAt(0, 0)), THRESHOLD);
  assert.equal(found?.key, 'best');
  assert.equal(await nearest(candidates.filter((candidate) => candidate.key !== 'best'), encodeVector(vectorAt(0, 0)), THRESHOLD), null);
});

describe('semantic cache: two gateways sharing Redis', { skip: NO_REDIS }, () => {
  let fake: OpenAIFake;
  let first: TestGateway;
  let second: TestGateway;

  before(async () => {
    fake = await startOpenAIFake();
    fake.scriptChat({ kind: 'reply', text: 'Shared answer.', usage: { promptTokens: 10, completionTokens: 2 } });
    const env = { ...gatewayEnv(fake), REDIS_URL: REDIS_URL!, MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:` };
    const configFile = { cache: [{ ...POLICY, apply: { all: true } }], limits: { redisCommandTimeoutMs: 10_000 } };
    first = await startTestGateway({ env, configFile });
    second = await startTestGateway({ env, configFile });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await fake?.server.close();
  });

  test("one instance's answer is the other's semantic hit", async () => {
    const one = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: await first.createKey(), maxRetries: 0 });
    const two = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: await second.createKey(), maxRetries: 0 });
    const ask = async (sdk: OpenAI, content: string, vector: number[]) => {
      embedsAs(fake, vector);
      return sdk.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }] }).withResponse();
    };
    const miss = await ask(one, 'Shared question', vectorAt(1, 0));
    assert.equal(miss.response.headers.get('x-modelgate-cache'), 'miss');
    const hit = await ask(two, 'The shared question, worded otherwise', vectorAt(1, 8));
    assert.equal(hit.response.headers.get('x-modelgate-cache'), 'hit');
    assert.ok(Number(hit.response.headers.get('x-modelgate-cache-similarity')) > THRESHOLD);
    assert.equal(hit.data.choices[0]!.message.content, 'Shared answer.');
    assert.equal(fake.chatRequests().length, 1);
  });
});
