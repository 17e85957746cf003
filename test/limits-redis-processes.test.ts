import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyStore } from '../src/keys/index.js';
import { openStorage } from '../src/storage/index.js';
import { startOpenAIFake } from './fakes/openai.js';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const RPM = 7;
const REQUESTS = 24;

test(
  'two gateway processes sharing Redis enforce one requests-per-minute limit together',
  { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : CLI_NOT_BUILT },
  async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-redis-processes-'));
    const fake = await startOpenAIFake();
    const processes: ServeProcess[] = [];
    try {
      // Both processes share the key (one SQLite file, WAL) and the Redis counters (one prefix for this test).
      const storage = await openStorage({ dataDir });
      const { secret } = await new KeyStore(storage.db).create({
        name: 'shared',
        projectId: 'default',
        scopes: ['model:request'],
        limits: { rpm: RPM, dailyTokens: null, monthlyCostUsd: null },
        allowedModels: null,
      });
      await storage.close();
      // This test is about the shared counter, not the per-instance fallback: a loaded machine
      // must not push an admission past the 500 ms default and have it counted locally.
      const configFile = join(dataDir, 'modelgate.yaml');
      writeFileSync(configFile, 'limits:\n  redisCommandTimeoutMs: 10000\n');
      const env = {
        MODELGATE_CONFIG: configFile,
        MODELGATE_PORT: '0',
        MODELGATE_DATA_DIR: dataDir,
        MODELGATE_LOG_LEVEL: 'warn',
        MODELGATE_ADMIN_TOKEN: 'mg-admin-redis-processes-token-0123456789',
        REDIS_URL: REDIS_URL!,
        MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
        OPENAI_BASE_URL: `${fake.server.url}/v1`,
        OPENAI_API_KEY: 'sk-upstream-redis-processes-000000000',
      };
      processes.push(await startServeProcess(env), await startServeProcess(env));

      await awayFromMinuteBoundary(15_000);
      const statuses = await Promise.all(
        Array.from({ length: REQUESTS }, async (_, index) => {
          const response = await fetch(`${processes[index % 2]!.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
          });
          await response.arrayBuffer();
          return { status: response.status };
        }),
      );
      // Each instance got 12 requests: per-instance counters would have admitted 14 in all.
      assert.equal(statuses.filter((result) => result.status === 200).length, RPM);
      assert.equal(statuses.filter((result) => result.status === 429).length, REQUESTS - RPM);
    } finally {
      for (const serveProcess of processes) assert.equal(await serveProcess.stop(), 0);
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
