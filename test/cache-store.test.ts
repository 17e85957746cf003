import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { cacheKeyOf, createCacheStore, MemoryCacheStore, ResponseCache, type CacheObserver, type CachePolicy, type CacheQuery, type CacheStore } from '../src/cache/index.js';
import { Value } from '@sinclair/typebox/value';
import { CachePolicySchema } from '../src/cache/index.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The response cache's stores (in-process and Redis): TTL, least-recently-used eviction by
 * entries and bytes, clearing a project; the key's normalisation; and two gateways sharing
 * Redis answering each other's requests.
 */

const REDIS_URL = process.env.TEST_REDIS_URL;
const NO_REDIS = REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false;
const BOUNDS = { maxEntries: 3, maxBytes: 1_000_000 };

function policy(overrides: Partial<CachePolicy> = {}): CachePolicy {
  return Value.Default(CachePolicySchema, { name: 'test', apply: { all: true }, ...overrides }) as CachePolicy;
}

function counting(): CacheObserver & { evictions: number } {
  return { evictions: 0, looked: () => undefined, kept: () => undefined, evicted(_policy, entries) { this.evictions += entries; }, failed: () => undefined };
}

test('the key leaves out who asked (user, metadata, stream flag aside) and sorts members; model, surface and stream are part of it', () => {
  const base = { surface: 'chat-completions', model: 'gpt-4o-mini', stream: false, body: { messages: [{ role: 'user', content: 'hi' }], temperature: 0 } };
  const key = cacheKeyOf(base);
  assert.equal(cacheKeyOf({ ...base, body: { temperature: 0, user: 'u-1', metadata: { a: 'b' }, messages: [{ content: 'hi', role: 'user' }] } }), key);
  assert.notEqual(cacheKeyOf({ ...base, model: 'gpt-4o' }), key);
  assert.notEqual(cacheKeyOf({ ...base, stream: true }), key);
  assert.notEqual(cacheKeyOf({ ...base, surface: 'messages' }), key);
  assert.notEqual(cacheKeyOf({ ...base, body: { ...base.body, temperature: 0.1 } }), key);
});

/** Runs the same store behaviour against each backend. */
const STORES: [name: string, make: () => Promise<CacheStore>, skip: string | false][] = [
  ['in-process', () => Promise.resolve(new MemoryCacheStore()), false],
  ['Redis', () => createCacheStore({ redisUrl: REDIS_URL, keyPrefix: `mg-cache-test-${randomBytes(6).toString('hex')}:`, commandTimeoutMs: 5_000 }), NO_REDIS],
];

for (const [name, make, skip] of STORES) {
  describe(`cache store: ${name}`, { skip }, () => {
    let store: CacheStore;
    before(async () => {
      store = await make();
    });
    after(() => store?.close());

    test('the least recently used entry is evicted once a namespace holds more than maxEntries; other namespaces are untouched', async () => {
      assert.equal(await store.set('project:a', 'k1', 'v1', 60_000, BOUNDS), 0);
      await store.set('project:a', 'k2', 'v2', 60_000, BOUNDS);
      await store.set('project:a', 'k3', 'v3', 60_000, BOUNDS);
      await store.set('project:b', 'k1', 'other', 60_000, BOUNDS);
      assert.equal(await store.get('project:a', 'k1'), 'v1'); // k2 is now the least recently used
      assert.equal(await store.set('project:a', 'k4', 'v4', 60_000, BOUNDS), 1);
      assert.equal(await store.get('project:a', 'k2'), null);
      assert.equal(await store.get('project:a', 'k1'), 'v1');
      assert.equal(await store.get('project:a', 'k4'), 'v4');
      assert.equal(await store.get('project:b', 'k1'), 'other');
    });

    test('maxBytes evicts the oldest until the namespace fits', async () => {
      const bounds = { maxEntries: 100, maxBytes: 2_000 };
      await store.set('project:bytes', 'a', 'x'.repeat(800), 60_000, bounds);
      await store.set('project:bytes', 'b', 'x'.repeat(800), 60_000, bounds);
      const evicted = await store.set('project:bytes', 'c', 'x'.repeat(900), 60_000, bounds);
      assert.equal(evicted, 1);
      assert.equal(await store.get('project:bytes', 'a'), null);
      assert.equal((await store.get('project:bytes', 'b'))?.length, 800);
      assert.equal((await store.get('project:bytes', 'c'))?.length, 900);
    });

    test('an entry past its TTL is gone', async () => {
      await store.set('project:ttl', 'short', 'v', 1, BOUNDS);
      await store.set('project:ttl', 'long', 'v', 60_000, BOUNDS);
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(await store.get('project:ttl', 'short'), null);
      assert.equal(await store.get('project:ttl', 'long'), 'v');
    });

    test("clearing a project removes its namespace and its keys' own, not a project whose id it begins", async () => {
      await store.set('project:p', 'k', 'v', 60_000, BOUNDS);
      await store.set('project:p:key:key_1', 'k', 'v', 60_000, BOUNDS);
      await store.set('project:pq', 'k', 'v', 60_000, BOUNDS);
      assert.equal(await store.clear('project:p'), 2);
      assert.equal(await store.get('project:p', 'k'), null);
      assert.equal(await store.get('project:p:key:key_1', 'k'), null);
      assert.equal(await store.get('project:pq', 'k'), 'v');
    });
  });
}

describe('response cache service', () => {
  const query = (overrides: Partial<CacheQuery> = {}): CacheQuery => ({
    surface: 'chat-completions',
    model: 'gpt-4o-mini',
    stream: false,
    body: { messages: [{ role: 'user', content: 'hi' }], temperature: 0 },
    caller: { keyId: 'key_1', projectId: 'p1' },
    traits: { temperature: 0, storeFalse: false, media: false, toolResults: false },
    controls: { use: 'default' },
    requestId: 'req_1',
    ...overrides,
  });
  const measured = () => ({ costMicroUsd: 42, usage: null });

  test('namespace key: another key of the same project misses; an answer holding a secret is not kept', async () => {
    const cache = new ResponseCache({ policies: [policy({ namespace: 'key' })], retentionDays: 30 }, new MemoryCacheStore(), counting());
    const miss = (await cache.ticket(query()))!;
    assert.equal(miss.status, 'miss');
    miss.keep({ completion: { text: 'hello' } }, measured, () => true);
    await new Promise((resolve) => setImmediate(resolve));
    const hit = (await cache.ticket(query()))!;
    assert.equal(hit.status, 'hit');
    assert.equal(hit.hit!.savedMicroUsd, 42);
    assert.equal(hit.hit!.sourceRequestId, 'req_1');
    assert.equal((await cache.ticket(query({ caller: { keyId: 'key_2', projectId: 'p1' } })))!.status, 'miss');

    const secret = (await cache.ticket(query({ body: { other: true } })))!;
    // Built, not written out: an obviously fake key of the shape the log's redaction knows.
    secret.keep({ completion: { text: `use sk-proj-${'FAKEfake00'.repeat(4)}` } }, measured, () => true);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await cache.ticket(query({ body: { other: true } })))!.status, 'miss');
  });

  test('no policy applies: no ticket; a policy limited to models leaves the others out', async () => {
    const cache = new ResponseCache({ policies: [policy({ apply: { projects: ['p1'], keys: [], models: ['gpt-4o'], all: false } })], retentionDays: 0 }, new MemoryCacheStore(), counting());
    assert.equal(await cache.ticket(query()), null);
    assert.equal((await cache.ticket(query({ model: 'gpt-4o' })))!.status, 'miss');
    assert.equal(await cache.ticket(query({ model: 'gpt-4o', caller: { keyId: 'key_9', projectId: 'p2' } })), null);
  });

  test('eviction is counted for the metrics', async () => {
    const observer = counting();
    const cache = new ResponseCache({ policies: [policy({ maxEntries: 1 })], retentionDays: 0 }, new MemoryCacheStore(), observer);
    for (const content of ['a', 'b', 'c']) {
      const ticket = (await cache.ticket(query({ body: { content } })))!;
      ticket.keep({ completion: { content } }, measured, () => true);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(observer.evictions, 2);
  });
});

test('a Redis that does not answer leaves the cache out of the request, never fails it', async () => {
  const failures: unknown[] = [];
  const observer = { ...counting(), failed: (error: unknown) => failures.push(error) };
  // Nothing listens on port 1: every command fails at once (no offline queue).
  const store = await createCacheStore({ redisUrl: 'redis://127.0.0.1:1', keyPrefix: 'mg-cache-down:', commandTimeoutMs: 200 });
  const cache = new ResponseCache({ policies: [policy()], retentionDays: 0 }, store, observer);
  try {
    const ticket = (await cache.ticket({
      surface: 'chat-completions',
      model: 'gpt-4o-mini',
      stream: false,
      body: { messages: [] },
      caller: { keyId: 'key_1', projectId: 'p1' },
      traits: { temperature: 0, storeFalse: false, media: false, toolResults: false },
      controls: { use: 'default' },
      requestId: 'req_1',
    }))!;
    assert.equal(ticket.status, 'bypass');
    assert.equal(ticket.reason, 'store_unavailable');
    assert.equal(failures.length, 1);
  } finally {
    await cache.close();
  }
});

describe('two gateways sharing Redis', { skip: NO_REDIS }, () => {
  let fake: OpenAIFake;
  let first: TestGateway;
  let second: TestGateway;

  before(async () => {
    fake = await startOpenAIFake();
    fake.scriptChat({ kind: 'reply', text: 'Shared answer.', usage: { promptTokens: 10, completionTokens: 2 } });
    const env = {
      OPENAI_BASE_URL: `${fake.server.url}/v1`,
      OPENAI_API_KEY: 'sk-upstream-cache-test',
      REDIS_URL: REDIS_URL!,
      MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
    };
    const configFile = { cache: [{ name: 'shared', apply: { all: true } }], limits: { redisCommandTimeoutMs: 10_000 } };
    first = await startTestGateway({ env, configFile });
    second = await startTestGateway({ env, configFile });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await fake?.server.close();
  });

  test("one instance's answer is the other's hit, as a stream too; clearing on one clears both", async () => {
    const clientOne = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: await first.createKey(), maxRetries: 0 });
    const clientTwo = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: await second.createKey(), maxRetries: 0 });
    const params = { model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user' as const, content: 'Shared question' }] };
    const calls = () => fake.chatRequests().length;
    const miss = await clientOne.chat.completions.create(params).withResponse();
    assert.equal(miss.response.headers.get('x-modelgate-cache'), 'miss');
    // The first instance sent its answer to Redis before its response ended.
    const hit = await clientTwo.chat.completions.create(params).withResponse();
    assert.equal(hit.response.headers.get('x-modelgate-cache'), 'hit');
    assert.equal(hit.data.choices[0]!.message.content, 'Shared answer.');
    assert.equal(calls(), 1);

    await clientTwo.chat.completions.stream(params).finalChatCompletion();
    const replayed = await clientOne.chat.completions.stream(params).finalChatCompletion();
    assert.equal(replayed.choices[0]!.message.content, 'Shared answer.');
    assert.equal(calls(), 2);

    const cleared = await first.admin('DELETE', '/admin/v1/cache');
    assert.equal(cleared.status, 200);
    assert.ok(cleared.body.cleared >= 2);
    assert.equal((await clientTwo.chat.completions.create(params).withResponse()).response.headers.get('x-modelgate-cache'), 'miss');
  });
});

describe('an answer kept before a guardrail was attached', { skip: NO_REDIS }, () => {
  test('is not served to calls under the guardrail: they miss, and get the checked answer', async () => {
    const fake = await startOpenAIFake();
    const env = {
      OPENAI_BASE_URL: `${fake.server.url}/v1`,
      OPENAI_API_KEY: 'sk-upstream-cache-test',
      REDIS_URL: REDIS_URL!,
      MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
    };
    const cache = [{ name: 'shared', apply: { all: true } }];
    const guardrails = [{ name: 'no-email', check: 'pii', stage: 'output', action: 'mask', apply: { all: true }, options: { kinds: ['email'] } }];
    // The same Redis, before and after the operator attached the guardrail (a rolling config change).
    const before = await startTestGateway({ env, configFile: { cache } });
    const after = await startTestGateway({ env, configFile: { cache, guardrails } });
    try {
      const params = { model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user' as const, content: "Who do I write to?" }] };
      fake.scriptChat({ kind: 'reply', text: 'Write to ada@example.com.', usage: { promptTokens: 10, completionTokens: 6 } });
      const unguarded = await new OpenAI({ baseURL: `${before.url}/v1`, apiKey: await before.createKey(), maxRetries: 0 }).chat.completions.create(params).withResponse();
      assert.equal(unguarded.data.choices[0]!.message.content, 'Write to ada@example.com.');

      fake.scriptChat({ kind: 'reply', text: 'Write to ada@example.com.', usage: { promptTokens: 10, completionTokens: 6 } });
      const guardedClient = new OpenAI({ baseURL: `${after.url}/v1`, apiKey: await after.createKey(), maxRetries: 0 });
      const guarded = await guardedClient.chat.completions.create(params).withResponse();
      assert.equal(guarded.response.headers.get('x-modelgate-cache'), 'miss');
      assert.doesNotMatch(guarded.data.choices[0]!.message.content ?? '', /ada@example\.com/);
      // Calls under the same guardrails share their (checked) answer.
      const again = await guardedClient.chat.completions.create(params).withResponse();
      assert.equal(again.response.headers.get('x-modelgate-cache'), 'hit');
      assert.equal(again.data.choices[0]!.message.content, guarded.data.choices[0]!.message.content);
      assert.equal(fake.chatRequests().length, 2);
    } finally {
      await before.close();
      await after.close();
      await fake.server.close();
    }
  });
});
