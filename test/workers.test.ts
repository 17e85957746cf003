import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_NOT_BUILT, startServeProcess } from './helpers/serve-process.js';

const ADMIN_TOKEN = 'mg-admin-workers-test-0123456789';
const REDIS_URL = process.env.TEST_REDIS_URL;

function baseEnv(): Record<string, string> {
  return {
    MODELGATE_PORT: '0',
    MODELGATE_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'modelgate-workers-')), 'data'),
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    MODELGATE_LOG_LEVEL: 'warn',
  };
}

describe('serve --workers', { skip: CLI_NOT_BUILT }, () => {
  test('more than one worker without REDIS_URL stops start-up with a message saying what to set', () => {
    const result = spawnSync(process.execPath, ['bin/modelgate.js', 'serve', '--workers', '2'], {
      env: { ...process.env, ...baseEnv(), REDIS_URL: '' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /server\.workers: 2 workers need REDIS_URL/);
  });

  test('serve --help gives the real default: a worker per core with REDIS_URL, else 1', () => {
    const result = spawnSync(process.execPath, ['bin/modelgate.js', 'serve', '--help'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 0);
    assert.match(result.stdout, /--workers <n>\s+worker processes \(default: one per core\s+with\s+REDIS_URL,\s+else\s+1\)/);
  });

  test('two workers share the port; a key made through one is honoured by both', { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, async () => {
    const server = await startServeProcess({ ...baseEnv(), MODELGATE_WORKERS: '2', REDIS_URL: REDIS_URL! });
    try {
      const created = await fetch(`${server.url}/admin/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'workers', scopes: ['utils:crypto'] }),
      });
      assert.equal(created.status, 201);
      const { secret } = (await created.json()) as { secret: string };
      // Connections are spread over the workers; each must learn the key (the other one by polling).
      const deadline = Date.now() + 5_000;
      let consecutive = 0;
      while (consecutive < 10) {
        assert.ok(Date.now() < deadline, 'the key did not reach every worker within 5 s');
        const response = await fetch(`${server.url}/v1/utils/encrypt`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ text: 'hello' }),
        });
        await response.arrayBuffer();
        consecutive = response.status === 200 ? consecutive + 1 : 0;
      }
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
