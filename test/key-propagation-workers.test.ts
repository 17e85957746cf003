import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { UNREACHABLE_REDIS_URL, createUsePauseRevoke, gatewayEnv } from './helpers/propagation-processes.js';

describe('serve --workers 2 on the embedded SQLite database', { skip: CLI_NOT_BUILT }, () => {
  let server: ServeProcess;
  let setting: ReturnType<typeof gatewayEnv>;

  before(async () => {
    // Redis out of reach: the only thing the workers share that carries messages is their primary.
    setting = gatewayEnv({ MODELGATE_WORKERS: '2', REDIS_URL: UNREACHABLE_REDIS_URL });
    server = await startServeProcess(setting.env);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    setting.dispose();
  });

  test('a key created through one worker works on the other at once; pause and revoke reach it long before the refresh interval', async () => {
    await createUsePauseRevoke(server.url, server.url);
  });
});
