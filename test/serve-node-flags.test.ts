import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { missingServeFlags, relaunchWithNodeFlags, SERVE_NODE_FLAGS } from '../src/cli/node-flags.js';
import { openStorage } from '../src/storage/index.js';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';

describe('the node flags of serve', () => {
  test('are the ones `npm start` passes', () => {
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    assert.equal(start, `node ${SERVE_NODE_FLAGS.join(' ')} bin/modelgate.js serve`);
  });

  test('are added by a relaunch for `serve` only: not for other commands or `serve --help`', () => {
    assert.equal(relaunchWithNodeFlags(['keys', 'list']), false);
    assert.equal(relaunchWithNodeFlags(['serve', '--help']), false);
    assert.equal(relaunchWithNodeFlags(['serve', '-h']), false);
    assert.equal(relaunchWithNodeFlags([]), false);
  });

  test('count as given on the command line or in NODE_OPTIONS, with any value and either spelling', () => {
    assert.deepEqual(missingServeFlags([], undefined), [...SERVE_NODE_FLAGS]);
    assert.deepEqual(missingServeFlags(['--v8-pool-size=1', '--max-semi-space-size=8'], undefined), []);
    assert.deepEqual(missingServeFlags(['--max_semi_space_size=16'], ''), ['--v8-pool-size=1']);
    assert.deepEqual(missingServeFlags(['--inspect'], '--v8-pool-size=2  --max-semi-space-size=4'), []);
    assert.deepEqual(missingServeFlags([], '--import x.mjs'), [...SERVE_NODE_FLAGS]);
  });
});

const ADMIN_TOKEN = 'mg-admin-node-flags-test-0123456789';

/** A gateway whose log rows wait in the queue until shutdown, so only a graceful shutdown writes them. */
function queueingEnv(dir: string): Record<string, string> {
  const configPath = join(dir, 'modelgate.yaml');
  writeFileSync(configPath, toYaml({ logs: { flushIntervalMs: 600_000, batchSize: 100_000, queueSize: 100_000 } }));
  return {
    MODELGATE_PORT: '0',
    MODELGATE_DATA_DIR: join(dir, 'data'),
    MODELGATE_CONFIG: configPath,
    MODELGATE_LOG_LEVEL: 'warn',
    MODELGATE_LOG_UNAUTHENTICATED_SUMMARY_MS: '0',
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    NODE_OPTIONS: '',
  };
}

function childPids(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim().split('\n').map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
}

function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** One request that leaves a row in the queue (an unknown key, each refusal its own row). */
async function refusedRequest(url: string): Promise<void> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer sk-mg-unknown${'0'.repeat(30)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(response.status, 401);
}

async function loggedRows(dataDir: string): Promise<number> {
  const storage = await openStorage({ dataDir });
  try {
    return (await storage.db.selectFrom('request_logs').select('request_id').execute()).length;
  } finally {
    await storage.close();
  }
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/**
 * Runs `check` against serve started without the flags, given the launcher and the pid of the
 * server it launched; afterwards neither is left running and the data is gone.
 */
async function withLaunched(check: (serve: ServeProcess, server: number, dataDir: string) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-flags-'));
  const serve = await startServeProcess({ ...queueingEnv(dir), ...env });
  const children = childPids(serve.child.pid!);
  try {
    assert.equal(children.length, 1, 'one server process');
    await check(serve, children[0]!, join(dir, 'data'));
  } finally {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    for (const pid of children) if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('serve started without the node flags', { skip: CLI_NOT_BUILT }, () => {
  test('serves from a child process that has them, with the output of a server started with them', async () => {
    await withLaunched(async (serve, server) => {
      assert.deepEqual(commandLine(server).slice(1, 3), [...SERVE_NODE_FLAGS]);
      assert.ok(!commandLine(serve.child.pid!).some((argument) => argument.startsWith('--v8-pool-size')));
      assert.deepEqual(childPids(server), [], 'the server did not launch another');
      assert.match(serve.output(), /^modelgate listening on http:\/\/127\.0\.0\.1:\d+ \(storage: SQLite in /);
      serve.child.kill('SIGTERM');
      const [code, signal] = (await serve.exited) as [number | null, string | null];
      assert.deepEqual({ code, signal }, { code: 0, signal: null }, serve.output());
    });
  });

  test('SIGTERM to the launcher stops the server gracefully: the queued row is written, both exit, code 0', async () => {
    await withLaunched(async (serve, server, dataDir) => {
      await refusedRequest(serve.url);
      serve.child.kill('SIGTERM');
      const [code, signal] = (await serve.exited) as [number | null, string | null];
      assert.deepEqual({ code, signal }, { code: 0, signal: null });
      assert.ok(!existsSync(`/proc/${server}`), 'the server outlived its launcher');
      assert.match(serve.output(), /SIGTERM received, finishing in-flight requests/);
      assert.doesNotMatch(serve.output(), /received again/, 'the signal reached the server once');
      assert.equal(await loggedRows(dataDir), 1);
    });
  });

  test('a launcher killed with SIGKILL leaves no orphan: the server shuts down gracefully and writes the queued row', async () => {
    await withLaunched(async (serve, server, dataDir) => {
      await refusedRequest(serve.url);
      serve.child.kill('SIGKILL');
      await serve.exited;
      await waitFor(() => !existsSync(`/proc/${server}`), 'the server to end');
      assert.match(serve.output(), /the process that started this one is gone, finishing in-flight requests/);
      assert.equal(await loggedRows(dataDir), 1);
    });
  });

  test('SIGHUP to the launcher reaches the server, which reloads its routing; both keep running', async () => {
    await withLaunched(async (serve, server) => {
      serve.child.kill('SIGHUP');
      await waitFor(() => serve.output().includes('routing reloaded from the configuration'), 'the server to reload its routing');
      assert.equal(serve.child.exitCode, null);
      assert.ok(existsSync(`/proc/${server}`));
      assert.equal((await fetch(`${serve.url}/healthz`)).status, 200);
    }, { MODELGATE_LOG_LEVEL: 'info' });
  });

  test('a server ended by a signal ends the launcher by the same signal', async () => {
    await withLaunched(async (serve, server) => {
      process.kill(server, 'SIGKILL');
      const [code, signal] = (await serve.exited) as [number | null, string | null];
      assert.deepEqual({ code, signal }, { code: null, signal: 'SIGKILL' });
    });
  });
});

describe('serve is not relaunched', { skip: CLI_NOT_BUILT }, () => {
  for (const [name, env, nodeArgs] of [
    ['when started with the flags, as `npm start` does', {}, SERVE_NODE_FLAGS],
    ['with MODELGATE_RELAUNCH=false', { MODELGATE_RELAUNCH: 'false' }, []],
  ] as const) {
    test(name, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'modelgate-flags-'));
      const serve = await startServeProcess({ ...queueingEnv(dir), ...env }, nodeArgs);
      try {
        assert.deepEqual(childPids(serve.child.pid!), []);
        assert.equal(await serve.stop(), 0);
      } finally {
        if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test('MODELGATE_RELAUNCH with another value than true or false stops serve with a message saying what to set (exit 2)', () => {
    const result = spawnSync(process.execPath, ['bin/modelgate.js', 'serve'], { env: { ...process.env, MODELGATE_RELAUNCH: 'no' }, encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /MODELGATE_RELAUNCH must be true or false/);
  });
});
