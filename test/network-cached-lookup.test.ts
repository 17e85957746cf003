import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { cachedLookup } from '../src/network/index.js';
import { startOpenAIFake } from './fakes/openai.js';
import { startTestGateway } from './helpers/gateway.js';

function lookUp(lookup: LookupFunction, hostname: string, all = false): Promise<string | LookupAddress[]> {
  return new Promise((resolve, reject) =>
    lookup(hostname, { all }, (error, address) => (error ? reject(error) : resolve(address as string | LookupAddress[]))),
  );
}

test('a host name is resolved once for concurrent calls, then answered from memory; past its TTL still at once, refreshed once behind', async () => {
  let resolutions = 0;
  let release: (() => void) | undefined;
  let clock = 0;
  const lookup = cachedLookup({
    ttlMs: 30_000,
    now: () => clock,
    resolver: async () => {
      resolutions += 1;
      // The first resolution is held, as one is behind a busy thread pool.
      if (resolutions === 1) await new Promise<void>((resolve) => (release = resolve));
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
  const concurrent = Array.from({ length: 50 }, () => lookUp(lookup, 'api.example.test'));
  release!();
  assert.deepEqual(new Set(await Promise.all(concurrent)), new Set(['127.0.0.1']));
  assert.equal(resolutions, 1, 'one resolution for 50 concurrent look-ups');
  await lookUp(lookup, 'api.example.test');
  assert.equal(resolutions, 1, 'answered from memory');
  clock += 30_000;
  assert.deepEqual(await lookUp(lookup, 'api.example.test', true), [{ address: '127.0.0.1', family: 4 }]);
  assert.equal(resolutions, 2, 'stale: answered as known and refreshed once');
});

test('a refresh that fails keeps the addresses known', async () => {
  let clock = 0;
  let fail = false;
  const lookup = cachedLookup({
    now: () => clock,
    resolver: async () => {
      if (fail) throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
  await lookUp(lookup, 'api.example.test');
  fail = true;
  clock += 60_000;
  assert.equal(await lookUp(lookup, 'api.example.test'), '127.0.0.1');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await lookUp(lookup, 'api.example.test'), '127.0.0.1');
});

test('providers are reached by host name through the cached lookup', async () => {
  const fake = await startOpenAIFake();
  const url = new URL(fake.server.url);
  const gateway = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-upstream-lookup-test-000000000000', OPENAI_BASE_URL: `http://localhost:${url.port}/v1` } });
  try {
    const key = await gateway.createKey();
    for (let call = 0; call < 3; call += 1) {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(response.status, 200);
    }
  } finally {
    await gateway.close();
    await fake.server.close();
  }
});
