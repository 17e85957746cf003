import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { stringify as toYaml } from 'yaml';
import { openStorage } from '../src/storage/index.js';
import { CLI_NOT_BUILT, startServeProcess } from './helpers/serve-process.js';

const REQUESTS = 600;

/** A gateway whose log rows all wait in the queue until shutdown (the batch never fills, the timer never fires). */
async function startQueueingGateway(dir: string) {
  const dataDir = join(dir, 'data');
  const configPath = join(dir, 'modelgate.yaml');
  writeFileSync(configPath, toYaml({ logs: { flushIntervalMs: 600_000, batchSize: 100_000, queueSize: 100_000 } }));
  const serve = await startServeProcess({
    MODELGATE_PORT: '0',
    MODELGATE_DATA_DIR: dataDir,
    MODELGATE_CONFIG: configPath,
    MODELGATE_LOG_LEVEL: 'warn',
    // Every refusal its own record: the rows are counted against the answers.
    MODELGATE_LOG_UNAUTHENTICATED_SUMMARY_MS: '0',
    MODELGATE_ADMIN_TOKEN: 'mg-admin-shutdown-test-token-0123456789',
  });
  return { ...serve, dataDir };
}

async function loggedRows(dataDir: string): Promise<number> {
  const storage = await openStorage({ dataDir });
  try {
    const { count } = await storage.db.selectFrom('request_logs').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
    return Number(count);
  } finally {
    await storage.close();
  }
}

function chatWithUnknownKey(url: string, index: number, dispatcher: Agent) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-mg-unknown${String(index).padStart(30, '0')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `request ${index}` }] }),
    dispatcher,
  });
}

test(
  'SIGTERM under load: every request that was answered has its log row, none is lost from the queue',
  { skip: CLI_NOT_BUILT },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-shutdown-'));
    const { child, url, stop, dataDir } = await startQueueingGateway(dir);
    const dispatcher = new Agent({ connections: 64 });
    try {
      let answered = 0;
      const statuses: (number | 'refused')[] = await Promise.all(
        Array.from({ length: REQUESTS }, async (_, index) => {
          try {
            const response = await chatWithUnknownKey(url, index, dispatcher);
            await response.arrayBuffer();
            answered += 1;
            if (answered === REQUESTS / 3) child.kill('SIGTERM');
            return response.status;
          } catch {
            return 'refused' as const;
          }
        }),
      );
      assert.equal(await stop(), 0);

      const logged = statuses.filter((status) => status === 401).length;
      // Requests that came in after SIGTERM were refused (503 or connection refused) and never reached a route.
      assert.ok(statuses.every((status) => status === 401 || status === 503 || status === 'refused'), String(statuses));
      assert.ok(logged >= REQUESTS / 3, `only ${logged} requests were answered`);

      assert.equal(await loggedRows(dataDir), logged);
    } finally {
      await dispatcher.close();
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('a second SIGTERM during the shutdown does not kill it: the queued log rows are still written, exit 0', { skip: CLI_NOT_BUILT }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-shutdown-'));
  const { child, url, exited, dataDir } = await startQueueingGateway(dir);
  const dispatcher = new Agent({ connections: 16 });
  try {
    const answered = 300;
    for (let start = 0; start < answered; start += 50) {
      const batch = Array.from({ length: 50 }, (_, offset) => chatWithUnknownKey(url, start + offset, dispatcher).then((response) => response.arrayBuffer()));
      await Promise.all(batch);
    }
    // The second signal goes as soon as the first was taken in, while the rows are being written.
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('SIGTERM received, finishing')) child.kill('SIGTERM');
    });
    child.kill('SIGTERM');
    const [code, signal] = (await exited) as [number | null, string | null];
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
    assert.equal(await loggedRows(dataDir), answered);
  } finally {
    await dispatcher.close();
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
