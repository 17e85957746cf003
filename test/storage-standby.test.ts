/**
 * A gateway whose database does not answer at start-up listens at once (decisions §11):
 * `/healthz` 200, `/readyz` 503 naming what it waits for, other routes 503
 * `storage_unavailable`; once the database answers it migrates and serves on the same address.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { startGateway, type RunningGateway } from '../src/server/gateway.js';
import { createPostgresDatabase, POSTGRES_URL } from './helpers/databases.js';
import { PLACEHOLDER_PROVIDER_KEYS, TEST_ADMIN_TOKEN } from './helpers/gateway.js';
import { startTcpProxy, throughProxy } from './helpers/tcp-proxy.js';

test(
  'a gateway started while its database is away listens at once, says what it waits for, and serves once the database answers',
  { skip: POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : false, timeout: 60_000 },
  async () => {
    const database = await createPostgresDatabase();
    const target = new URL(POSTGRES_URL!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    proxy.refuse();
    const env = {
      ...PLACEHOLDER_PROVIDER_KEYS,
      MODELGATE_PORT: '0',
      MODELGATE_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'modelgate-standby-')), 'data'),
      MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MODELGATE_LOG_LEVEL: 'silent',
      DATABASE_URL: throughProxy(database.url, proxy),
      MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
    };
    let listening!: (url: string) => void;
    const standbyUrl = new Promise<string>((resolve) => (listening = resolve));
    const starting = startGateway(loadConfig({ env, cwd: tmpdir() }), { env, onStandby: (url) => listening(url) });
    let gateway: RunningGateway | undefined;
    try {
      const url = await standbyUrl;
      assert.equal((await fetch(`${url}/healthz`)).status, 200);
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 503);
      const readiness = (await ready.json()) as { checks: { storage: string }; missing: string[] };
      assert.equal(readiness.checks.storage, 'waiting');
      assert.match(readiness.missing[0]!, /waiting for the database \(PostgreSQL at 127\.0\.0\.1:\d+\/modelgate_test_\w+\)/);
      assert.doesNotMatch(JSON.stringify(readiness), /postgres:\/\//, 'the database is named without its URL');
      const chat = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(chat.status, 503);
      assert.equal(chat.headers.get('retry-after'), '1');
      const body = (await chat.json()) as { error: { code: string; type: string; request_id: string } };
      assert.equal(body.error.code, 'storage_unavailable');
      assert.equal(body.error.type, 'api_error');
      assert.equal(body.error.request_id, chat.headers.get('x-request-id'));

      proxy.restore();
      gateway = await starting;
      assert.equal(gateway.url, url, 'the gateway serves on the address the standby listener had');
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const keys = await fetch(`${url}/admin/v1/keys`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.equal(keys.status, 200, 'migrated and serving');
    } finally {
      proxy.restore();
      gateway ??= await starting.catch(() => undefined);
      await gateway?.close();
      await proxy.close();
      await database.drop();
    }
  },
);
