import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { GatewayError } from '../src/errors/index.js';
import { openStorage, type Storage } from '../src/storage/index.js';
import { Authenticator, KeyCache, KeyStore, generateSecret, hashSecret, type KeyRow, type NewKey } from '../src/keys/index.js';
import {
  CONCURRENT_LOOKUPS,
  LOOKUP_DEADLINE_MS,
  PENDING_LOOKUPS,
  UNKNOWN_KEYS_REMEMBERED,
  UnknownKeyLookups,
} from '../src/keys/unknown-key-lookups.js';

const silent = pino({ level: 'silent' });
const NEW_KEY: NewKey = { name: 'unit', projectId: 'default', scopes: ['model:request'], limits: { rpm: null, dailyTokens: null, monthlyCostUsd: null }, allowedModels: null };

/** The error code `run` fails with, or 'none'. */
async function refusal(run: () => unknown): Promise<string> {
  try {
    await run();
    return 'none';
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    return error.code;
  }
}

describe('a secret the key cache does not hold', () => {
  let dir: string;
  let storage: Storage;
  /** Another instance's store: what it creates, this instance's cache has never seen. */
  let elsewhere: KeyStore;
  let store: KeyStore;
  let lookups: string[];
  let failNextLookups: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'modelgate-keys-unknown-'));
    storage = await openStorage({ dataDir: dir });
    elsewhere = new KeyStore(storage.db);
    store = new KeyStore(storage.db);
    const findByHash = store.findByHash.bind(store);
    store.findByHash = async (hash) => {
      lookups.push(hash);
      if (failNextLookups > 0) {
        failNextLookups -= 1;
        throw new Error('connection terminated unexpectedly');
      }
      return findByHash(hash);
    };
  });
  after(async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function freshInstance(): Promise<Authenticator> {
    lookups = [];
    failNextLookups = 0;
    const cache = new KeyCache(store, silent);
    await cache.load();
    return new Authenticator(cache, { requireKeys: true });
  }

  test('a key created on another instance is admitted at once, without waiting for a refresh', async () => {
    const authenticator = await freshInstance();
    const { secret, row } = await elsewhere.create(NEW_KEY);
    const principal = await authenticator.authenticate({ authorization: `Bearer ${secret}` }, 'model:request');
    assert.equal(principal.kind === 'key' && principal.keyId, row.id);
    // Known from then on: the next request is decided in memory.
    const again = authenticator.authenticate({ authorization: `Bearer ${secret}` }, 'model:request');
    assert.ok(!(again instanceof Promise));
    assert.equal(lookups.length, 1);
  });

  test('a paused or revoked key found by the lookup is refused as such, not as unknown', async () => {
    const authenticator = await freshInstance();
    const paused = await elsewhere.create(NEW_KEY);
    await elsewhere.transition(paused.row.id, 'pause');
    const revoked = await elsewhere.create(NEW_KEY);
    await elsewhere.transition(revoked.row.id, 'revoke');
    assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': paused.secret }, 'model:request')), 'key_paused');
    assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': revoked.secret }, 'model:request')), 'key_revoked');
  });

  test('concurrent requests with one unknown secret share one lookup, and it is not looked up again for a while', async () => {
    const authenticator = await freshInstance();
    const secret = generateSecret();
    const codes = await Promise.all(Array.from({ length: 50 }, () => refusal(() => authenticator.authenticate({ 'x-api-key': secret }, 'model:request'))));
    assert.deepEqual(new Set(codes), new Set(['invalid_api_key']));
    assert.deepEqual(lookups, [hashSecret(secret)]);
    assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': secret }, 'model:request')), 'invalid_api_key');
    assert.equal(lookups.length, 1);
  });

  test('a value not of the gateway\'s secret form is refused without a lookup', async () => {
    const authenticator = await freshInstance();
    for (const value of ['not-a-key', 'sk-mg-short', `sk-proj-${'a'.repeat(40)}`]) {
      assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': value }, 'model:request')), 'invalid_api_key');
    }
    assert.deepEqual(lookups, []);
  });

  test('a failing lookup refuses the key (fail closed) and is not remembered: the key works once the store answers', async () => {
    const authenticator = await freshInstance();
    const { secret } = await elsewhere.create(NEW_KEY);
    failNextLookups = 1;
    assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': secret }, 'model:request')), 'invalid_api_key');
    assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': secret }, 'model:request')), 'none');
    assert.equal(lookups.length, 2);
  });

  test('a key created here is never refused as remembered-unknown', async () => {
    lookups = [];
    const cache = new KeyCache(store, silent);
    const authenticator = new Authenticator(cache, { requireKeys: true });
    const { secret, row } = await elsewhere.create(NEW_KEY);
    // The store says "unknown" (a read before the row was visible), then the row arrives by a refresh or an announcement.
    const findByHash = store.findByHash;
    store.findByHash = async () => undefined;
    try {
      assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': secret }, 'model:request')), 'invalid_api_key');
    } finally {
      store.findByHash = findByHash;
    }
    cache.put(row);
    assert.equal(await refusal(() => authenticator.authenticate({ 'x-api-key': secret }, 'model:request')), 'none');
  });
});

describe('lookups of unknown secrets are bounded', () => {
  test('a few run at once, a bounded number wait, and the rest are refused without one', async () => {
    let running = 0;
    let mostRunning = 0;
    const release: (() => void)[] = [];
    const lookups = new UnknownKeyLookups(async () => {
      running += 1;
      mostRunning = Math.max(mostRunning, running);
      await new Promise<void>((resolve) => release.push(resolve));
      running -= 1;
      return undefined;
    }, silent);
    const pending = Array.from({ length: PENDING_LOOKUPS }, (_, index) => lookups.lookUp(`hash-${index}`));
    assert.ok(pending.every((lookup) => lookup instanceof Promise));
    assert.equal(lookups.lookUp('one-too-many'), undefined, 'a lookup beyond the bound is refused at once');
    while (release.length > 0) {
      release.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(pending);
    assert.equal(mostRunning, CONCURRENT_LOOKUPS);
  });

  test(`a store that never answers refuses the request after ${LOOKUP_DEADLINE_MS} ms instead of holding it`, async () => {
    const lookups = new UnknownKeyLookups(() => new Promise<KeyRow | undefined>(() => undefined), silent);
    assert.equal(await lookups.lookUp('stuck'), undefined);
  });

  test('the memory of unknown secrets keeps at most its bound, forgetting the oldest first', async () => {
    const asked: string[] = [];
    const lookups = new UnknownKeyLookups(async (hash) => {
      asked.push(hash);
      return undefined;
    }, silent);
    for (let index = 0; index <= UNKNOWN_KEYS_REMEMBERED; index += 1) await lookups.lookUp(`hash-${index}`);
    asked.length = 0;
    // The newest is still remembered; the oldest made room for it and is asked again.
    assert.equal(lookups.lookUp(`hash-${UNKNOWN_KEYS_REMEMBERED}`), undefined);
    await lookups.lookUp('hash-0');
    assert.deepEqual(asked, ['hash-0']);
  });
});
