// How much of the request log a crash loses: drives chat requests at a gateway, kills it with
// SIGKILL (no shutdown runs), then counts which answered requests have a row. Run it built:
//
//   npm run build && node bench/crash-loss.mjs            # SQLite (embedded)
//   BENCH_DATABASE_URL=postgres://… node bench/crash-loss.mjs   # PostgreSQL (a fresh database)
//
// Environment: CRASH_LOAD_SECONDS (load before the kill, 5), CRASH_CONNECTIONS (concurrent
// clients, 16), CRASH_ROUNDS (kills, 3). Prints, per round, the requests answered 200 before
// the kill, the rows found, the answered requests without a row, and that loss as
// milliseconds of traffic at the measured rate.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import { freePort, startProcess, stop } from './lib/processes.mjs';
import { ADMIN_TOKEN, createDatabase, startFlags, startUpstream } from './lib/targets.mjs';
import { restoredRequestId } from '../dist/logs/log-rows.js';

const bench = dirname(fileURLToPath(import.meta.url));
const root = join(bench, '..');
const loadSeconds = Number(process.env.CRASH_LOAD_SECONDS ?? 5);
const connections = Number(process.env.CRASH_CONNECTIONS ?? 16);
const rounds = Number(process.env.CRASH_ROUNDS ?? 3);
const databaseServer = process.env.BENCH_DATABASE_URL;

/** Request ids the gateway's PostgreSQL database holds. */
async function postgresIds(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query('select request_id from request_logs');
  await client.end();
  return new Set(rows.map((row) => restoredRequestId(row.request_id)));
}

async function round(upstream) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-crash-'));
  const database = databaseServer ? await createDatabase(databaseServer) : null;
  const env = {
    OPENAI_BASE_URL: `${upstream.base}/v1`,
    OPENAI_API_KEY: 'sk-bench-upstream-credential',
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    MODELGATE_LOG_LEVEL: 'warn',
    ...(database ? { DATABASE_URL: database.url, MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') } : {}),
  };
  // With the flags of `npm start` the process started is the server itself: the SIGKILL below
  // is its crash (a launcher killed instead would have the server shut down gracefully).
  const args = [...startFlags(root), join(root, 'bin/modelgate.js'), 'serve', '--port', String(port), '--data-dir', dataDir, '--workers', '1'];
  const server = await startProcess('modelgate', process.execPath, args, { env, ready: /listening on/, cwd: root });
  const base = `http://127.0.0.1:${port}`;
  const created = await fetch(`${base}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'crash', scopes: ['model:request'] }),
  });
  const { secret } = await created.json();

  const pool = new Pool(base, { connections });
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello, who are you?' }] });
  const answered = [];
  let running = true;
  const startedAt = performance.now();
  const client = async () => {
    while (running) {
      try {
        const response = await pool.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body,
        });
        await response.body.text();
        // Only an answer whole before the kill counts: the row is due once the response ended.
        if (running && response.statusCode === 200) answered.push(response.headers['x-request-id']);
      } catch {
        return;
      }
    }
  };
  const clients = Array.from({ length: connections }, client);
  await new Promise((resolve) => setTimeout(resolve, loadSeconds * 1000));
  running = false;
  server.child.kill('SIGKILL');
  const killedAt = performance.now();
  await Promise.allSettled(clients);
  await pool.destroy();
  await stop(server);

  const stored = database ? await postgresIds(database.url) : readSqliteIds(dataDir);
  const lost = answered.filter((id) => !stored.has(id)).length;
  const perSecond = answered.length / ((killedAt - startedAt) / 1000);
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  return { answered: answered.length, rows: stored.size, lost, perSecond, lostMs: (lost / perSecond) * 1000 };
}

function readSqliteIds(dataDir) {
  const db = new Database(join(dataDir, 'modelgate.db'), { readonly: true });
  try {
    return new Set(db.prepare('select request_id from request_logs').all().map((row) => restoredRequestId(row.request_id)));
  } finally {
    db.close();
  }
}

const upstream = await startUpstream(bench);
try {
  console.log(`storage: ${databaseServer ? 'PostgreSQL' : 'SQLite'}, ${connections} connections, ${loadSeconds} s of load, then SIGKILL`);
  for (let index = 1; index <= rounds; index += 1) {
    const result = await round(upstream);
    console.log(
      `round ${index}: ${result.answered} answered (${result.perSecond.toFixed(0)}/s), ${result.rows} rows, ${result.lost} answered without a row = ${result.lostMs.toFixed(0)} ms of traffic`,
    );
  }
} finally {
  await stop(upstream);
}
