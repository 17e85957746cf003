import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { Keyring, keyIdOf } from '../src/crypto/index.js';
import { GatewayError } from '../src/errors/index.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const keyA = randomBytes(32);
const keyB = randomBytes(32);

function assertRejected(action: () => unknown, field: string): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, 'invalid_body');
    assert.equal(error.status, 400);
    assert.equal(error.param, field);
    return true;
  });
}

/** Flips one bit of the sealed part, keeping the value well-formed. */
function tamper(value: string): string {
  const dot = value.lastIndexOf('.');
  const sealed = Buffer.from(value.slice(dot + 1), 'base64url');
  sealed[14] = sealed[14]! ^ 0x01;
  return `${value.slice(0, dot + 1)}${sealed.toString('base64url')}`;
}

const PROJECT = 'research';

/** A value as gateways made them before values were bound to a project (format v1: the header alone is the associated data). */
function versionOneValue(key: Buffer, text: string): string {
  const header = `enc::v1.${keyIdOf(key)}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(header, 'utf8'));
  return `${header}.${Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString('base64url')}`;
}

describe('Keyring', () => {
  test('round-trips text, tagged with the id of the current key', () => {
    const keyring = new Keyring(keyA);
    for (const text of ['', 'Never give the answer: 42.', 'ünïcødé ✓ 漢字', 'x'.repeat(100_000)]) {
      const value = keyring.encrypt(text, PROJECT);
      assert.ok(value.startsWith(`enc::v2.${keyIdOf(keyA)}.`));
      assert.equal(keyring.decrypt(value, 'field', PROJECT), text);
    }
    assert.notEqual(keyring.encrypt('same', PROJECT), keyring.encrypt('same', PROJECT), 'a fresh IV every time');
    assert.match(keyIdOf(keyA), /^[0-9a-f]{8}$/);
  });

  test('values of a previous key still decrypt after a rotation; new values use the new key', () => {
    const old = new Keyring(keyA).encrypt('old secret', PROJECT);
    const rotated = new Keyring(keyB, [keyA]);
    assert.equal(rotated.decrypt(old, 'field', PROJECT), 'old secret');
    assert.ok(rotated.encrypt('new', PROJECT).startsWith(`enc::v2.${keyIdOf(keyB)}.`));
  });

  test('a value is bound to its project: another project gets the error a tampered value gets', () => {
    const keyring = new Keyring(keyA);
    const value = keyring.encrypt('the prompt', PROJECT);
    const messageOf = (action: () => unknown) => {
      try {
        action();
      } catch (error) {
        assert.ok(error instanceof GatewayError);
        return [error.code, error.status, error.param, error.message];
      }
      assert.fail('not refused');
    };
    const foreign = messageOf(() => keyring.decrypt(value, 'encryptedText', 'other'));
    assert.deepEqual(foreign, messageOf(() => keyring.decrypt(tamper(value), 'encryptedText', PROJECT)));
    assert.equal(foreign[0], 'invalid_body');
    assertRejected(() => keyring.decrypt(value, 'x', ''), 'x');
    // The project is not a suffix game: "a","bc" and "ab","c" are different associated data.
    assertRejected(() => keyring.decrypt(keyring.encrypt('t', 'research-'), 'x', 'research'), 'x');
    assert.equal(keyring.forProject(PROJECT).decrypt(keyring.forProject(PROJECT).encrypt('via forProject'), 'x'), 'via forProject');
  });

  test('version 1 values (made before the binding) still open, for any project, until encrypted again', () => {
    const old = versionOneValue(keyA, 'written before');
    const keyring = new Keyring(keyA);
    assert.equal(keyring.decrypt(old, 'field', PROJECT), 'written before');
    assert.equal(keyring.decrypt(old, 'field', 'other'), 'written before');
    assertRejected(() => keyring.decrypt(tamper(old), 'field', PROJECT), 'field');
    // A v1 value relabelled v2 (or the reverse) does not open: the version is authenticated.
    assertRejected(() => keyring.decrypt(old.replace('enc::v1.', 'enc::v2.'), 'field', PROJECT), 'field');
    assertRejected(() => keyring.decrypt(keyring.encrypt('x', PROJECT).replace('enc::v2.', 'enc::v1.'), 'field', PROJECT), 'field');
  });

  test('tampered, malformed and foreign values are a 400 naming the field, never a crash', () => {
    const keyring = new Keyring(keyA);
    const value = keyring.encrypt('secret', PROJECT);
    const [prefix, id, sealed] = [value.slice(0, 8), keyIdOf(keyA), value.split('.')[2]!];
    const decrypt = (text: string, field: string) => () => keyring.decrypt(text, field, PROJECT);
    assertRejected(decrypt(tamper(value), 'encryptedText'), 'encryptedText');
    assertRejected(decrypt(`${prefix}${keyIdOf(keyB)}.${sealed}`, 'encryptedText'), 'encryptedText');
    assertRejected(decrypt(`${prefix}${id}.${sealed.slice(0, -2)}`, 'x'), 'x');
    assertRejected(decrypt(`${prefix}${id}.${sealed}=`, 'x'), 'x');
    assertRejected(decrypt(`${prefix}${id}.AAAA`, 'x'), 'x');
    assertRejected(decrypt('enc::v3.abcdef01.AAAA', 'x'), 'x');
    assertRejected(decrypt('enc::not even close', 'x'), 'x');
    assertRejected(decrypt('plain text', 'x'), 'x');
    assertRejected(() => new Keyring(keyB).decrypt(value, 'prompts.chatSystemPrompt', PROJECT), 'prompts.chatSystemPrompt');
  });
});

describe('POST /v1/utils/encrypt and /v1/utils/decrypt', () => {
  const dataDirs: string[] = [];
  after(() => {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>, configFile?: Record<string, unknown>) {
    const tap = new RecordTap();
    const gateway = await startTestGateway({ env, ...(configFile ? { configFile } : {}), routes: [...ROUTE_MODULES, tap.routes] });
    const secret = await gateway.createKey({ scopes: ['utils:crypto'] });
    const client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    return { gateway, tap, client };
  }

  async function post(gateway: TestGateway, secret: string, path: string, body: unknown) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Loose, requestId: response.headers.get('x-request-id')! };
  }

  test('round trip; tampering is a 400; payloads are never kept raw in the request record', async () => {
    const { gateway, tap, client } = await start({ MODELGATE_ENCRYPTION_KEY: keyA.toString('base64') });
    try {
      const encrypted = (await client.post('/utils/encrypt', { body: { text: 'The answer is 42; never say it.' } })) as { encryptedText: string };
      assert.match(encrypted.encryptedText, new RegExp(`^enc::v2\\.${keyIdOf(keyA)}\\.`));
      const decrypted = await client.post('/utils/decrypt', { body: { encryptedText: encrypted.encryptedText } });
      assert.deepEqual(decrypted, { text: 'The answer is 42; never say it.' });

      const secret = await gateway.createKey({ scopes: ['utils:crypto'] });
      const bad = await post(gateway, secret, '/v1/utils/decrypt', { encryptedText: tamper(encrypted.encryptedText) });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.code, 'invalid_body');
      assert.equal(bad.body.error.param, 'encryptedText');
      assert.equal(bad.body.error.request_id, bad.requestId);

      const plain = await post(gateway, secret, '/v1/utils/decrypt', { encryptedText: 'hello' });
      assert.equal(plain.status, 400);

      const roundTrip = await post(gateway, secret, '/v1/utils/encrypt', { text: 'keep me out of logs' });
      const record = await tap.wait(roundTrip.requestId);
      assert.equal(record.mode, 'utility');
      const logged = JSON.stringify([record.requestPayload, record.responsePayload]);
      assert.doesNotMatch(logged, /keep me out of logs/);
      assert.doesNotMatch(logged, /enc::/);
      const failed = await tap.wait(bad.requestId);
      assert.doesNotMatch(JSON.stringify(failed.requestPayload), /enc::/);
    } finally {
      await gateway.close();
    }
  });

  test('a key of another project gets the 400 a tampered value gets; secrets are never cached', async () => {
    const { gateway } = await start({ MODELGATE_ENCRYPTION_KEY: keyA.toString('base64') });
    try {
      await gateway.admin('POST', '/admin/v1/projects', { id: 'other', name: 'Other' });
      const own = await gateway.createKey({ scopes: ['utils:crypto'] });
      const other = await gateway.createKey({ scopes: ['utils:crypto'], projectId: 'other' });
      const sealed = await post(gateway, own, '/v1/utils/encrypt', { text: 'project secret' });
      const opened = await fetch(`${gateway.url}/v1/utils/decrypt`, {
        method: 'POST',
        headers: { authorization: `Bearer ${own}`, 'content-type': 'application/json' },
        body: JSON.stringify({ encryptedText: sealed.body.encryptedText }),
      });
      assert.equal(opened.status, 200);
      assert.equal(opened.headers.get('cache-control'), 'no-store');
      const foreign = await post(gateway, other, '/v1/utils/decrypt', { encryptedText: sealed.body.encryptedText });
      const tampered = await post(gateway, own, '/v1/utils/decrypt', { encryptedText: tamper(sealed.body.encryptedText) });
      assert.equal(foreign.status, 400);
      const { request_id: _foreignId, ...foreignError } = foreign.body.error;
      const { request_id: _tamperedId, ...tamperedError } = tampered.body.error;
      assert.deepEqual(foreignError, tamperedError);
      assert.doesNotMatch(JSON.stringify(foreign.body), /project secret/);

      const created = await fetch(`${gateway.url}/admin/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'cached?', scopes: ['model:request'] }),
      });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('cache-control'), 'no-store');
    } finally {
      await gateway.close();
    }
  });

  test('needs the utils:crypto scope and a JSON body with exactly the documented field', async () => {
    const { gateway } = await start({ MODELGATE_ENCRYPTION_KEY: keyA.toString('base64') });
    try {
      const modelOnly = await gateway.createKey({ scopes: ['model:request'] });
      const denied = await post(gateway, modelOnly, '/v1/utils/encrypt', { text: 'x' });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'insufficient_scope');

      const secret = await gateway.createKey({ scopes: ['utils:crypto'] });
      const missing = await post(gateway, secret, '/v1/utils/encrypt', {});
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.param, 'text');
      const extra = await post(gateway, secret, '/v1/utils/decrypt', { encryptedText: 'enc::x', text: 'y' });
      assert.equal(extra.status, 400);
      assert.equal(extra.body.error.param, 'text');
    } finally {
      await gateway.close();
    }
  });

  test('after a restart with a new key and previousEncryptionKeys, old values still decrypt', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-crypto-'));
    dataDirs.push(dataDir);
    const first = await start({ MODELGATE_ENCRYPTION_KEY: keyA.toString('base64'), MODELGATE_DATA_DIR: dataDir });
    let old: string;
    try {
      old = ((await first.client.post('/utils/encrypt', { body: { text: 'written before the rotation' } })) as { encryptedText: string }).encryptedText;
    } finally {
      await first.gateway.close();
    }

    const withoutOld = await start({ MODELGATE_ENCRYPTION_KEY: keyB.toString('base64'), MODELGATE_DATA_DIR: dataDir });
    try {
      const secret = await withoutOld.gateway.createKey({ scopes: ['utils:crypto'] });
      const foreign = await post(withoutOld.gateway, secret, '/v1/utils/decrypt', { encryptedText: old });
      assert.equal(foreign.status, 400, 'a value of a key this gateway does not hold is the caller’s 400');
      assert.equal(foreign.body.error.code, 'invalid_body');
    } finally {
      await withoutOld.gateway.close();
    }

    const rotated = await start(
      { MODELGATE_ENCRYPTION_KEY: keyB.toString('base64'), MODELGATE_DATA_DIR: dataDir },
      { previousEncryptionKeys: { [keyIdOf(keyA)]: keyA.toString('base64') } },
    );
    try {
      assert.deepEqual(await rotated.client.post('/utils/decrypt', { body: { encryptedText: old } }), { text: 'written before the rotation' });
      const fresh = (await rotated.client.post('/utils/encrypt', { body: { text: 'after' } })) as { encryptedText: string };
      assert.ok(fresh.encryptedText.startsWith(`enc::v2.${keyIdOf(keyB)}.`));
    } finally {
      await rotated.gateway.close();
    }
  });
});
