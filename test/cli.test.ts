import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { SERVE_NODE_FLAGS } from '../src/cli/node-flags.js';

/**
 * The real CLI, as an operator runs it: `node bin/modelgate.js …` (dist/ is built by `npm test`
 * before the tests run). Nothing here imports the gateway's modules.
 */
const BIN = resolve('bin/modelgate.js');
const BUILT_CLI = resolve('dist/cli/main.js');

/** The environment of an operator who has set nothing: the CLI must find the admin token in the data dir. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(MODELGATE_|DATABASE_URL$|REDIS_URL$|PORT$|OPENAI_|GEMINI_|ANTHROPIC_)/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, MODELGATE_LOG_LEVEL: 'warn' };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const address = server.address();
  await new Promise<void>((closed) => server.close(() => closed()));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let workDir: string;
let dataDir: string;
let url: string;
let server: ChildProcess;
let serverExit: Promise<number | null>;
/** What the server wrote to stderr: Node's warnings (a deprecated option, say) land there. */
let serverStderr = '';
/** What the server wrote to stdout: the start-up report. */
let serverStdout = '';

function cli(...args: string[]): Promise<CliResult> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: workDir, env: cleanEnvironment() }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      done({ code, stdout, stderr });
    });
  });
}

/** `keys …` against the server started here, the admin token read from its data dir. */
function keys(...args: string[]): Promise<CliResult> {
  return cli('keys', ...args, '--url', url, '--data-dir', dataDir);
}

function adminToken(): string {
  return readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
}

/** Resolves with the first stdout line containing `text`; rejects if the process ends first. */
function waitForLine(child: ChildProcess, text: string): Promise<string> {
  return new Promise((found, failed) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.includes(text));
      if (line !== undefined) {
        child.stdout?.off('data', onData);
        found(line);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => failed(new Error(`modelgate serve exited (${code}) before printing "${text}": ${output}`)));
  });
}

async function chatStatus(secret: string): Promise<number> {
  const client = new OpenAI({ apiKey: secret, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10_000 });
  try {
    await client.chat.completions.create({ model: 'service-1', messages: [{ role: 'user', content: 'ping' }] });
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
    throw error;
  }
}

async function encryptStatus(secret: string): Promise<{ status: number; code: string | undefined }> {
  const response = await fetch(`${url}/v1/utils/encrypt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'hello' }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code };
}

before(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'modelgate-cli-'));
  dataDir = join(workDir, 'data');
  const port = await freePort();
  server = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', dataDir], {
    cwd: workDir,
    env: cleanEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  serverExit = new Promise((exited) => server.once('exit', (code) => exited(code)));
  server.stderr?.on('data', (chunk: Buffer) => (serverStderr += chunk.toString()));
  server.stdout?.on('data', (chunk: Buffer) => (serverStdout += chunk.toString()));
  const line = await waitForLine(server, 'listening on');
  url = /listening on (http:\/\/\S+)/.exec(line)?.[1] ?? '';
  assert.equal(url, `http://127.0.0.1:${port}`);
});

after(async () => {
  if (server.exitCode === null) server.kill('SIGKILL');
  rmSync(workDir, { recursive: true, force: true });
});

describe('npm start', () => {
  test('starts node with the V8 flags the benchmark and the docs assume', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'modelgate-start-'));
    const probe = join(directory, 'probe.cjs');
    // NODE_OPTIONS reaches npm's own node too: only the gateway's process answers.
    writeFileSync(probe, "if (/bin[\\\\/]modelgate\\.js$/.test(process.argv[1] ?? '')) { process.stdout.write('EXECARGV ' + JSON.stringify(process.execArgv) + '\\n'); process.exit(0); }");
    const stdout = await new Promise<string>((done, failed) => {
      // Bounded: if the probe did not match, the real server would start and keep running.
      execFile('npm', ['start', '--silent'], { env: { ...process.env, NODE_OPTIONS: `--require ${probe}` }, timeout: 30_000 }, (error, output) =>
        error === null ? done(output) : failed(error),
      );
    });
    rmSync(directory, { recursive: true, force: true });
    const line = stdout.split('\n').find((candidate) => candidate.startsWith('EXECARGV '));
    assert.ok(line !== undefined, `the gateway process did not start: ${stdout}`);
    const execArgv = JSON.parse(line.slice('EXECARGV '.length)) as string[];
    for (const flag of SERVE_NODE_FLAGS) assert.ok(execArgv.includes(flag), `${flag} missing: ${line}`);
  });
});

describe('npx modelgate in a checkout', () => {
  test("runs the checkout's own CLI, not a copy npx would build into its cache", async () => {
    // The package depends on itself (file:.), so npm links its bin into node_modules/.bin.
    assert.equal(realpathSync(resolve('node_modules/.bin/modelgate')), BIN);
    // npm 11 installs the checkout into npx's cache the first time (as a link), which runs
    // `prepare` there: with an empty cache every time, that path is the one tested, and it
    // must not build dist/ again under the gateways other tests are running from it.
    const npxCache = mkdtempSync(join(tmpdir(), 'modelgate-npx-cache-'));
    const builtAt = statSync(BUILT_CLI).mtimeMs;
    try {
      const help = await new Promise<string>((done, failed) =>
        execFile('npx', ['--no-install', 'modelgate', '--help'], { timeout: 60_000, env: { ...process.env, npm_config_cache: npxCache } }, (error, output, errors) =>
          error === null ? done(output) : failed(new Error(`${error.message}\n${errors}`)),
        ),
      );
      assert.match(help, /^Usage: modelgate/m);
      assert.equal(statSync(BUILT_CLI).mtimeMs, builtAt, 'dist/ was built again');
    } finally {
      rmSync(npxCache, { recursive: true, force: true });
    }
  });
});

describe('modelgate serve start-up', () => {
  test('says which config file, providers, storage, Redis and docs URL it uses, and what is missing', async () => {
    // The report is written with the listening line, in one write.
    const report = serverStdout.split('\n');
    const at = report.findIndex((candidate) => candidate.includes('listening on'));
    const lines = report.slice(at + 1, at + 10).join('\n');
    assert.match(lines, new RegExp(`config file  none \\(no modelgate\\.yaml in ${workDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)`));
    assert.match(lines, /providers {4}none configured/);
    for (const [name, variable] of [['openai', 'OPENAI_API_KEY'], ['gemini', 'GEMINI_API_KEY'], ['anthropic', 'ANTHROPIC_API_KEY']]) {
      assert.match(lines, new RegExp(`not configured, their models are not served: .*${name} \\(set ${variable}\\)`));
    }
    assert.match(lines, new RegExp(`storage      SQLite in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(lines, /redis {8}none/);
    assert.ok(lines.includes(`docs         ${url}/docs (OpenAPI document: ${url}/openapi.json)`), lines);
  });
});

describe('modelgate CLI against a real `modelgate serve`', () => {
  let key: { id: string; secret: string; status: string; scopes: string[] };

  test('--help lists the commands', async () => {
    const top = await cli('--help');
    assert.equal(top.code, 0);
    assert.match(top.stdout, /serve/);
    assert.match(top.stdout, /keys/);
    const group = await cli('keys', '--help');
    assert.equal(group.code, 0);
    for (const command of ['create', 'list', 'show', 'pause', 'resume', 'revoke', 'update']) assert.match(group.stdout, new RegExp(`\\b${command}\\b`));
    const create = await cli('keys', 'create', '--help');
    for (const flag of ['--name', '--scopes', '--project', '--rpm', '--daily-tokens', '--monthly-cost', '--models', '--json', '--url', '--data-dir']) {
      assert.ok(create.stdout.includes(flag), `keys create --help lacks ${flag}`);
    }
  });

  test('keys create --json prints the key and its secret once', async () => {
    const created = await keys('create', '--name', 't', '--scopes', 'model:request,utils:crypto', '--rpm', '30', '--json');
    assert.equal(created.code, 0, created.stderr);
    key = JSON.parse(created.stdout);
    assert.match(key.id, /^key_/);
    assert.match(key.secret, /^sk-mg-[0-9A-Za-z]{32,}$/);
    assert.equal(key.status, 'active');
    assert.deepEqual(key.scopes, ['model:request', 'utils:crypto']);

    const response = await fetch(`${url}/admin/v1/keys/${key.id}`, { headers: { authorization: `Bearer ${adminToken()}` } });
    assert.equal(response.status, 200);
    const view = (await response.json()) as Record<string, unknown>;
    assert.equal(view.id, key.id);
    assert.equal(view.secret, undefined);
    assert.deepEqual(view.limits, { rpm: 30, daily_tokens: null, monthly_cost_usd: null });
  });

  test('the new key is accepted on keyed routes', async () => {
    // /v1/chat/completions may not be served yet (404); what matters is that the key is not refused.
    const status = await chatStatus(key.secret);
    assert.ok(status !== 401 && status !== 403, `chat answered ${status}`);
    assert.ok(![401, 403].includes((await encryptStatus(key.secret)).status));
  });

  test('keys list: --json and the readable table', async () => {
    const json = await keys('list', '--json');
    assert.equal(json.code, 0, json.stderr);
    const list = JSON.parse(json.stdout) as { object: string; data: { id: string }[] };
    assert.equal(list.object, 'list');
    assert.ok(list.data.some((item) => item.id === key.id));
    assert.ok(!json.stdout.includes(key.secret));

    const table = await keys('list');
    assert.equal(table.code, 0, table.stderr);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    assert.match(header!, /^ID\s+NAME\s+PROJECT\s+STATUS\s+SCOPES/);
    const row = rows.find((line) => line.startsWith(key.id));
    assert.ok(row !== undefined, table.stdout);
    assert.match(row, /\bactive\b/);
    assert.match(row, /model:request,utils:crypto/);
  });

  test('keys show prints the key without its secret', async () => {
    const shown = await keys('show', key.id);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^id\\s+${key.id}$`, 'm'));
    assert.match(shown.stdout, /^rpm\s+30$/m);
    assert.ok(!shown.stdout.includes(key.secret));
  });

  test('keys pause: the key is rejected; keys resume: accepted again', async () => {
    const paused = await keys('pause', key.id, '--json');
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal(JSON.parse(paused.stdout).status, 'paused');
    // utils/encrypt proves the rejection; chat must too once it is served (404 until then).
    assert.deepEqual(await encryptStatus(key.secret), { status: 403, code: 'key_paused' });
    assert.ok([403, 404].includes(await chatStatus(key.secret)));

    const again = await keys('pause', key.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already paused/);

    assert.equal((await keys('resume', key.id)).code, 0);
    assert.notEqual((await encryptStatus(key.secret)).status, 403);
  });

  test('keys update changes limits; none clears one', async () => {
    const updated = await keys('update', key.id, '--rpm', 'none', '--monthly-cost', '12.5', '--models', 'service-1,gpt-4o-mini', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    const view = JSON.parse(updated.stdout);
    assert.deepEqual(view.limits, { rpm: null, daily_tokens: null, monthly_cost_usd: 12.5 });
    assert.deepEqual(view.allowed_models, ['service-1', 'gpt-4o-mini']);

    const nothing = await keys('update', key.id);
    assert.equal(nothing.code, 1);
    assert.match(nothing.stderr, /nothing to change/);
  });

  test('keys revoke is final: the server message is printed and the exit code is non-zero', async () => {
    assert.equal((await keys('revoke', key.id, '--yes')).code, 0);
    assert.deepEqual(await encryptStatus(key.secret), { status: 403, code: 'key_revoked' });
    const resumed = await keys('resume', key.id);
    assert.equal(resumed.code, 1);
    assert.match(resumed.stderr, /revocation is final/);
    assert.equal(resumed.stdout, '');
  });

  test('errors: unknown key, bad scope, unreachable server, no admin token', async () => {
    const unknown = await keys('show', 'key_0000000000000000');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no key with id "key_0000000000000000"/);

    const badScope = await keys('create', '--name', 'x', '--scopes', 'model:everything');
    assert.notEqual(badScope.code, 0);
    assert.match(badScope.stderr, /unknown scope "model:everything"/);

    const closedPort = await freePort();
    const unreachable = await cli('keys', 'list', '--url', `http://127.0.0.1:${closedPort}`, '--data-dir', dataDir);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, new RegExp(`cannot reach the gateway at http://127\\.0\\.0\\.1:${closedPort}`));

    const noToken = await cli('keys', 'list', '--url', url, '--data-dir', join(workDir, 'elsewhere'));
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /no admin token/);

    // The gateway is running: the URL's password is the problem, and it is not printed.
    const withPassword = await cli('keys', 'list', '--url', url.replace('http://', 'http://admin:url-password-0000@'), '--data-dir', dataDir);
    assert.equal(withPassword.code, 1);
    assert.match(withPassword.stderr, /must not hold a user name or password/);
    assert.doesNotMatch(withPassword.stderr, /url-password-0000|cannot reach/);
  });

  test('SIGTERM stops the server with exit code 0; nothing was written to stderr (no warnings) all along', async () => {
    server.kill('SIGTERM');
    assert.equal(await serverExit, 0);
    assert.equal(serverStderr, '');
  });
});

test('serve names the config file as the source of an admin token it holds', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-cli-config-'));
  writeFileSync(join(dir, 'modelgate.yaml'), 'adminToken: mg-admin-config-file-token-0123456789\n');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', join(dir, 'data')], {
    cwd: dir,
    env: cleanEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  try {
    const line = await waitForLine(child, 'listening on');
    assert.match(line, /admin token from the config file \(adminToken\)/);
    assert.doesNotMatch(line, /MODELGATE_ADMIN_TOKEN|config-file-token/);
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serve against a database it cannot reach waits for it and says so, without the password', async () => {
  const port = await freePort();
  const env = {
    ...cleanEnvironment(),
    DATABASE_URL: `postgres://modelgate:unreachable-db-password@127.0.0.1:${port}/modelgate`,
    MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    MODELGATE_ADMIN_TOKEN: 'mg-admin-unreachable-db-test-0123456789',
    MODELGATE_PORT: '0',
  };
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((done) => child.once('exit', done));
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (/next attempt in 2 s/.test(output)) resolve();
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', (code) => reject(new Error(`modelgate serve exited (${code}) instead of waiting: ${output}`)));
    });
    assert.match(output, new RegExp(`waiting for the database \\(PostgreSQL at 127\\.0\\.0\\.1:${port}/modelgate\\); next attempt in 1 s`));
    assert.match(output, /connect ECONNREFUSED/);
    assert.doesNotMatch(output, /unreachable-db-password/);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

test(
  'serve against a database that refuses it for good (no such database) stops with exit 1 and says so',
  { skip: process.env.TEST_DATABASE_URL === undefined ? 'TEST_DATABASE_URL is not set' : false },
  async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/modelgate_no_such_database';
    const result = await new Promise<CliResult>((done) => {
      const env = {
        ...cleanEnvironment(),
        DATABASE_URL: url.toString(),
        MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
        MODELGATE_ADMIN_TOKEN: 'mg-admin-unreachable-db-test-0123456789',
        MODELGATE_PORT: '0',
      };
      execFile(process.execPath, [BIN, 'serve'], { env, timeout: 60_000 }, (error, stdout, stderr) => {
        done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
      });
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^modelgate: could not migrate the database: database "modelgate_no_such_database" does not exist\n$/);
  },
);
