// The servers of the benchmark: the fake upstream, the bare proxy and modelgate in its
// realistic configuration (key auth, a per-key rpm limit, request logging with payloads on).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, SERVER_CORE, startProcess, stop } from './processes.mjs';

export const ADMIN_TOKEN = 'mg-admin-bench-token-0123456789abcdef';

export async function startUpstream(bench, env = {}, core = SERVER_CORE) {
  const port = await freePort();
  const upstream = await startProcess('upstream', process.execPath, [join(bench, 'fake-upstream.mjs')], {
    core,
    env: { PORT: String(port), ...env },
    ready: /"port"/,
  });
  return { ...upstream, base: `http://127.0.0.1:${port}` };
}

/**
 * A reference server in front of the upstream: `bare-proxy.mjs`, or `lean-proxy.mjs` with
 * `--lean`, or `minimal-gateway.mjs` with `--minimal` (which checks `env.API_KEY`). `launcher`:
 * a command and its arguments that run node (valgrind), as for `startModelgate`.
 */
export async function startReferenceProxy(bench, upstreamBase, nodeArgs = [], { name = 'bare proxy', script = 'bare-proxy.mjs', env = {}, launcher = [] } = {}) {
  const port = await freePort();
  const [command, ...launcherArgs] = [...launcher, process.execPath];
  const proxy = await startProcess(name, command, [...launcherArgs, ...nodeArgs, join(bench, script)], {
    env: { PORT: String(port), UPSTREAM: upstreamBase, ...env },
    ready: /"port"/,
  });
  return { ...proxy, base: `http://127.0.0.1:${port}` };
}

/**
 * The minimal gateway (`minimal-gateway.mjs`) with modelgate's node flags, so the two differ in
 * their code only; its `apiKey` is made here. options: env, launcher (as for `startReferenceProxy`).
 */
export async function startMinimalGateway(root, bench, upstreamBase, nodeArgs = [], { env = {}, launcher = [] } = {}) {
  const apiKey = `sk-minimal-${randomBytes(16).toString('hex')}`;
  const minimal = await startReferenceProxy(bench, upstreamBase, [...startFlags(root), ...nodeArgs], {
    name: 'minimal gateway',
    script: 'minimal-gateway.mjs',
    env: { API_KEY: apiKey, ...env },
    launcher,
  });
  return { ...minimal, apiKey };
}

/** A fresh PostgreSQL database (dropped by `drop`), so runs never see each other's rows. */
export async function createDatabase(serverUrl) {
  const name = `modelgate_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/**
 * The node flags of `npm start` (`node <flags> bin/modelgate.js serve`): modelgate is measured
 * as it is started, while the harness still starts node itself (to pin it and add flags such
 * as --inspect).
 */
export function startFlags(root) {
  const start = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts?.start ?? '';
  return /^node\s+(.*?)\s*bin\/modelgate\.js\b/.exec(start)?.[1].split(/\s+/).filter(Boolean) ?? [];
}

/**
 * Starts `modelgate serve` (the built CLI) against the upstream and creates its API key.
 * options: databaseUrl (a PostgreSQL server: a fresh database is made in it), redisUrl,
 * workers, nodeArgs (e.g. --inspect), env, core (default: the server core), launcher (a command
 * and its arguments that run node, e.g. valgrind).
 */
export async function startModelgate(root, upstreamBase, options = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const database = options.databaseUrl ? await createDatabase(options.databaseUrl) : null;
  const env = {
    OPENAI_BASE_URL: `${upstreamBase}/v1`,
    OPENAI_API_KEY: 'sk-bench-upstream-credential',
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    MODELGATE_LOG_LEVEL: 'warn',
    MODELGATE_LOG_PAYLOADS: 'true',
    ...(database ? { DATABASE_URL: database.url, MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') } : {}),
    ...(options.redisUrl ? { REDIS_URL: options.redisUrl, MODELGATE_REDIS_KEY_PREFIX: `modelgate:bench:${randomBytes(4).toString('hex')}:` } : {}),
    ...options.env,
  };
  // A checkout with the response cache gets a policy for the cache scenarios' one model (bodies.mjs `cached`); the others never match it.
  if (existsSync(join(root, 'src/cache/policy.ts')) && env.MODELGATE_CONFIG === undefined) {
    env.MODELGATE_CONFIG = join(dataDir, 'modelgate.yaml');
    writeFileSync(env.MODELGATE_CONFIG, 'cache:\n  - name: bench\n    apply: { all: true, models: [gpt-4.1-nano] }\n');
  }
  const bin = join(root, 'bin/modelgate.js');
  const nodeArgs = [...startFlags(root), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(options.nodeArgs ?? [])];
  const args = [...nodeArgs, bin, 'serve', '--port', String(port), '--data-dir', dataDir, '--workers', String(options.workers ?? 1)];
  let server;
  try {
    const [command, ...launcherArgs] = [...(options.launcher ?? []), process.execPath];
    server = await startProcess(options.name ?? 'modelgate', command, [...launcherArgs, ...args], { env, ready: /listening on/, cwd: root, core: options.core ?? SERVER_CORE });
  } catch (error) {
    await database?.drop();
    throw error;
  }
  const base = `http://127.0.0.1:${port}`;
  const response = await fetch(`${base}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    // A real limit that every request is counted against, high enough never to refuse one.
    body: JSON.stringify({ name: 'bench', scopes: ['model:request'], limits: { rpm: 100_000_000 } }),
  });
  const key = await response.json();
  if (!response.ok) throw new Error(`could not create a key: ${JSON.stringify(key)}`);
  return {
    ...server,
    base,
    apiKey: key.secret,
    async close() {
      await stop(server);
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
