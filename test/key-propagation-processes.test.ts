import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { POSTGRES_URL, createPostgresDatabase } from './helpers/databases.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';
import { createUsePauseRevoke, gatewayEnv } from './helpers/propagation-processes.js';

const REDIS_URL = process.env.TEST_REDIS_URL;

const NEEDS_POSTGRES_AND_REDIS =
  CLI_NOT_BUILT || (POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false);

describe('two gateway processes on PostgreSQL and Redis', { skip: NEEDS_POSTGRES_AND_REDIS }, () => {
  let database: { url: string; drop(): Promise<void> };
  const settings: ReturnType<typeof gatewayEnv>[] = [];
  const gateways: ServeProcess[] = [];

  before(async () => {
    database = await createPostgresDatabase();
    for (let index = 0; index < 2; index += 1) {
      settings.push(
        gatewayEnv({
          DATABASE_URL: database.url,
          MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
          REDIS_URL: REDIS_URL!,
          // One process each (with REDIS_URL the default is a worker per core): the instances are the two processes.
          MODELGATE_WORKERS: '1',
          MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
        }),
      );
    }
    // Both at once: each waits for the other's migrations (the migrator's lock), not for its whole start.
    gateways.push(...(await Promise.all(settings.map((setting) => startServeProcess(setting.env)))));
  });
  after(async () => {
    for (const gateway of gateways) assert.equal(await gateway.stop(), 0);
    for (const setting of settings) setting.dispose();
    await database?.drop();
  });

  test('a key created on one works on the other at once; pause and revoke reach it long before the refresh interval', async () => {
    await createUsePauseRevoke(gateways[0]!.url, gateways[1]!.url);
  });
});
