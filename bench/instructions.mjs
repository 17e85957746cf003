// Machine instructions per request of modelgate, counted by valgrind's callgrind. CPU time on
// this shared VM moves by 5–15 % between processes and minutes; an instruction count moves by
// a few per cent at most, so a change of a few per cent can be told — before and after,
// alternating, in one run. It counts work, not time: cache misses, system calls and page
// faults do not show, so it complements the CPU figures of `npm run bench`, never replaces them.
//
//   npm run bench:instructions -- stream          # any body of lib/bodies.mjs (default chat)
//   BENCH_BASELINE_DIR=<other built checkout> npm run bench:instructions -- stream
//   npm run bench:instructions -- chat --minimal --bare   # the minimal gateway and the bare proxy too
//   npm run bench:instructions -- chat --pg-redis         # modelgate with PostgreSQL + Redis too
//   npm run bench:instructions -- cached --header x-modelgate-cache:refresh   # a header on every request (a cache miss)
//
// Environment: BENCH_INSTRUCTION_ROUNDS (rounds per target, 2), BENCH_WARM_REQUESTS (20000: the
// JIT settles under valgrind too), BENCH_COUNTED_REQUESTS (10000), BENCH_CALLGRIND_KEEP (keep
// callgrind's files, for `callgrind_annotate`: native functions by name; with
// BENCH_NODE_ARGS=--perf-basic-prof, bench/callgrind-names.mjs names JavaScript too),
// BENCH_DATABASE_URL / BENCH_REDIS_URL (else TEST_DATABASE_URL / TEST_REDIS_URL) for --pg-redis;
// only modelgate's own process is counted, not PostgreSQL's or Redis's. Node runs
// under valgrind about 50 times slower: a round takes ~1.5 minutes per target for chat, ~7 for
// streams. The counters are switched on only for the counted requests (callgrind_control),
// which 10 connections send with the benchmark's bodies.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { PATHS, writeBodies } from './lib/bodies.mjs';
import { LOAD_CORE, killAll, pinSelf, stop } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { startMinimalGateway, startModelgate, startReferenceProxy, startUpstream } from './lib/targets.mjs';

const bench = dirname(fileURLToPath(import.meta.url));
const root = join(bench, '..');
const args = process.argv.slice(2);
const scenario = args.find((arg, index) => !arg.startsWith('--') && args[index - 1] !== '--header') ?? 'chat';
const rounds = Number(process.env.BENCH_INSTRUCTION_ROUNDS ?? 2);
const warmRequests = Number(process.env.BENCH_WARM_REQUESTS ?? 20000);
const countedRequests = Number(process.env.BENCH_COUNTED_REQUESTS ?? 10000);
const CONNECTIONS = 10;

const count = (value) => Math.round(value).toLocaleString('en');
/** --header name:value (repeatable) on every request: `--header x-modelgate-cache:refresh` counts a cache miss. */
const EXTRA_HEADERS = Object.fromEntries(
  args.flatMap((arg, index) => (arg === '--header' ? [args[index + 1]] : [])).map((header) => [header.slice(0, header.indexOf(':')), header.slice(header.indexOf(':') + 1)]),
);

/** Sends `count` requests over `pool`, `CONNECTIONS` at a time; every answer must be a 200. */
async function send(pool, count, { path, body, apiKey }) {
  let sent = 0;
  const connection = async () => {
    while (sent < count) {
      sent += 1;
      const response = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...EXTRA_HEADERS }, body });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
}

/**
 * The instructions callgrind counted while the counters were on (each dump's `summary:` line),
 * per thread (--separate-threads: one file per thread, `-01` the main thread's, the event loop):
 * { total, loop }.
 */
function countedInstructions(outputDir) {
  const counts = readdirSync(outputDir)
    .filter((file) => file.startsWith('callgrind.'))
    .map((file) => ({ file, count: Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(outputDir, file), 'utf8'))?.[1] ?? 0) }));
  const total = counts.reduce((sum, { count }) => sum + count, 0);
  const loop = counts.filter(({ file }) => file.endsWith('-01')).reduce((sum, { count }) => sum + count, 0);
  return { total, loop };
}

// Under valgrind a server answers a few hundred requests a second, so a request log's 200 ms
// timer would write batches whose size follows the machine's speed, where a loaded server
// writes full batches of 100: a long interval keeps them full, as under load.
const FLUSH_INTERVAL_MS = 60_000;
// What `startModelgate` adds from BENCH_NODE_ARGS (--perf-basic-prof), for the other targets too.
const benchNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** Starters of the targets, each under `launcher` (callgrind), writing what it needs into `outputDir`. */
const STARTERS = {
  modelgate: (checkout, storage = {}) => (upstreamBase, launcher, outputDir) => {
    const config = join(outputDir, 'modelgate.yaml');
    writeFileSync(config, `logs:\n  flushIntervalMs: ${FLUSH_INTERVAL_MS}\n`);
    return startModelgate(checkout, upstreamBase, { launcher, name: `modelgate (${checkout})`, env: { MODELGATE_CONFIG: config }, ...storage });
  },
  minimal: () => (upstreamBase, launcher) => startMinimalGateway(root, bench, upstreamBase, benchNodeArgs, { launcher, env: { FLUSH_INTERVAL_MS: String(FLUSH_INTERVAL_MS) } }),
  bare: () => async (upstreamBase, launcher) => ({ ...(await startReferenceProxy(bench, upstreamBase, benchNodeArgs, { launcher })), apiKey: 'none' }),
};

/** One server started by `start` under callgrind: warmed, then its instructions for the counted requests. */
async function measure(start, upstreamBase, body) {
  const outputDir = mkdtempSync(join(tmpdir(), 'modelgate-callgrind-'));
  const launcher = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${join(outputDir, 'callgrind.%p')}`];
  const server = await start(upstreamBase, launcher, outputDir);
  const pool = new Pool(server.base, { connections: CONNECTIONS });
  try {
    const load = { path: PATHS[scenario], body, apiKey: server.apiKey };
    await send(pool, warmRequests, load);
    execFileSync('callgrind_control', ['--instr=on', String(server.pid)], { stdio: 'ignore' });
    await send(pool, countedRequests, load);
    execFileSync('callgrind_control', ['--dump', String(server.pid)], { stdio: 'ignore' });
    const { total, loop } = countedInstructions(outputDir);
    return { total: total / countedRequests, loop: loop / countedRequests };
  } finally {
    await pool.close();
    await (server.close?.() ?? stop(server));
    if (process.env.BENCH_CALLGRIND_KEEP) process.stdout.write(`callgrind's files kept in ${outputDir} (callgrind_annotate <file>.1)\n`);
    else rmSync(outputDir, { recursive: true, force: true });
  }
}

async function main() {
  if (!PATHS[scenario]) throw new Error(`unknown scenario ${scenario}; use one of ${Object.keys(PATHS).join(', ')}`);
  pinSelf();
  if (!args.includes('--no-build')) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  const bodyFile = writeBodies(mkdtempSync(join(tmpdir(), 'modelgate-bench-')))[scenario];
  const body = readFileSync(bodyFile);
  const upstream = await startUpstream(bench, {}, LOAD_CORE);
  const targets = [{ name: 'modelgate', start: STARTERS.modelgate(root) }];
  if (process.env.BENCH_BASELINE_DIR) targets.push({ name: 'modelgate baseline', start: STARTERS.modelgate(resolve(process.env.BENCH_BASELINE_DIR)) });
  if (args.includes('--pg-redis')) {
    const databaseUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
    if (!databaseUrl || !redisUrl) throw new Error('--pg-redis needs BENCH_DATABASE_URL and BENCH_REDIS_URL (or TEST_DATABASE_URL and TEST_REDIS_URL)');
    targets.push({ name: 'modelgate pg+redis', start: STARTERS.modelgate(root, { databaseUrl, redisUrl }) });
    if (process.env.BENCH_BASELINE_DIR) targets.push({ name: 'modelgate baseline pg+redis', start: STARTERS.modelgate(resolve(process.env.BENCH_BASELINE_DIR), { databaseUrl, redisUrl }) });
  }
  if (args.includes('--minimal')) targets.push({ name: 'minimal gateway', start: STARTERS.minimal() });
  if (args.includes('--bare')) targets.push({ name: 'bare proxy', start: STARTERS.bare() });
  const results = new Map(targets.map((target) => [target.name, []]));
  for (let round = 1; round <= rounds; round += 1) {
    for (const target of round % 2 === 1 ? targets : [...targets].reverse()) {
      const perRequest = await measure(target.start, upstream.base, body);
      results.get(target.name).push(perRequest);
      process.stdout.write(`${scenario} / ${target.name} (round ${round}): ${count(perRequest.total)} instructions per request, ${count(perRequest.loop)} on the event loop\n`);
    }
  }
  upstream.child.kill('SIGTERM');
  process.stdout.write(`\n${scenario}, ${countedRequests} requests counted after ${warmRequests}, ${rounds} rounds (median), every thread / the event loop (main thread) alone:\n`);
  for (const part of ['total', 'loop']) {
    const current = median(results.get('modelgate').map((value) => value[part]));
    for (const [name, values] of results) {
      const figure = median(values.map((value) => value[part]));
      const ratio = name === 'modelgate' ? '' : `  (modelgate ÷ ${name} ${(current / figure).toFixed(3)})`;
      const label = `${name}${part === 'loop' ? ', event loop' : ''}`;
      process.stdout.write(`  ${label.padEnd(40)} ${count(figure).padStart(12)} instructions per request, rounds ${values.map((value) => count(value[part])).join(' / ')}${ratio}\n`);
    }
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  killAll();
  process.exit(1);
});
