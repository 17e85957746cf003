// The modelgate benchmark: a fake OpenAI upstream, a bare pass-through proxy and modelgate
// (embedded storage; then PostgreSQL + Redis when BENCH_DATABASE_URL / BENCH_REDIS_URL are set)
// driven with the same load in one run. wrk is pinned to core 0, every server to core 1.
//
//   npm run bench                       # full run, ~10 s per measurement
//   BENCH_DURATION=3 npm run bench      # quicker
//   npm run bench -- --soak             # 10 minutes at a moderate rate, RSS over time
//   npm run bench -- --workers          # also modelgate with serve --workers 2
//
// Output: a table on stdout and bench/results/<timestamp>.json.
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = new Set(process.argv.slice(2));
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ADMIN_TOKEN = 'mg-admin-bench-token-0123456789abcdef';
const CLK_TCK = 100;
const children = [];

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a process pinned to `core` and resolves when a stdout line matches `ready`. */
function startProcess(name, command, commandArgs, { env = {}, core = 1, ready }) {
  const child = spawn('taskset', ['-c', String(core), command, ...commandArgs], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (data) => (stderr += data));
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${stderr}`)), 30_000);
    child.stdout.on('data', (data) => {
      buffer += data;
      const line = buffer.split('\n').find((candidate) => ready.test(candidate));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve({ name, child, pid: child.pid, line });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited with ${code}: ${stderr}`)));
  });
}

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function resetPeakRss(pid) {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function peakRssMb(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : null;
}

function currentRssMb(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : null;
}

function wrk(url, bodyFile, connections, seconds, apiKey) {
  const output = execFileSync(
    'taskset',
    ['-c', '0', 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', join(here, 'post.lua'), url],
    { env: { ...process.env, BENCH_BODY_FILE: bodyFile, BENCH_API_KEY: apiKey ?? '' }, encoding: 'utf8' },
  );
  const line = output.split('\n').find((candidate) => candidate.startsWith('BENCH_JSON '));
  return JSON.parse(line.slice('BENCH_JSON '.length));
}

function ttfb(url, bodyFile, count, apiKey) {
  const output = execFileSync('taskset', ['-c', '0', process.execPath, join(here, 'ttfb.mjs'), url, bodyFile, String(count), apiKey ?? ''], {
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').at(-1));
}

async function startUpstream(extraEnv = {}) {
  const port = await freePort();
  const upstream = await startProcess('upstream', process.execPath, [join(here, 'fake-upstream.mjs')], {
    env: { PORT: String(port), ...extraEnv },
    ready: /"port"/,
  });
  return { ...upstream, base: `http://127.0.0.1:${port}` };
}

async function startModelgate(upstreamBase, { databaseUrl, redisUrl, workers } = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const env = {
    OPENAI_BASE_URL: `${upstreamBase}/v1`,
    OPENAI_API_KEY: 'sk-bench-upstream-credential',
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    MODELGATE_LOG_LEVEL: 'warn',
    MODELGATE_LOG_PAYLOADS: 'true',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, MODELGATE_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  };
  const serveArgs = [join(root, 'bin/modelgate.js'), 'serve', '--port', String(port), '--data-dir', dataDir, '--workers', String(workers ?? 1)];
  const server = await startProcess('modelgate', process.execPath, serveArgs, { env, ready: /listening on/ });
  const base = `http://127.0.0.1:${port}`;
  const response = await fetch(`${base}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['model:request'], limits: { rpm: 100_000_000 } }),
  });
  const key = await response.json();
  if (!response.ok) throw new Error(`could not create a key: ${JSON.stringify(key)}`);
  return { ...server, base, apiKey: key.secret };
}

function stop(processInfo) {
  processInfo.child.kill('SIGTERM');
  return new Promise((resolve) => processInfo.child.once('exit', resolve));
}

function writeBodies(dir) {
  const chat = JSON.stringify({ stream: false, model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello, who are you?' }] });
  const stream = JSON.stringify({ stream: true, model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello, who are you?' }] });
  const embeddings = JSON.stringify({ model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog' });
  const png = Buffer.alloc(1024 * 1024, 1);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const image = JSON.stringify({
    stream: false,
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }] }],
  });
  const files = { chat, stream, embeddings, image };
  return Object.fromEntries(Object.entries(files).map(([name, body]) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, body);
    return [name, path];
  }));
}

const SCENARIOS = [
  { name: 'chat c=1', body: 'chat', path: '/v1/chat/completions', connections: 1 },
  { name: 'chat c=50', body: 'chat', path: '/v1/chat/completions', connections: 50 },
  { name: 'stream c=50', body: 'stream', path: '/v1/chat/completions', connections: 50 },
  { name: 'embeddings c=50', body: 'embeddings', path: '/v1/embeddings', connections: 50 },
  { name: 'image 1MiB c=10', body: 'image', path: '/v1/chat/completions', connections: 10 },
];

/** Measures one scenario against one target: wrk throughput/latency, server CPU per request, peak RSS. */
function measure(target, scenario, bodies, cpuPids) {
  wrk(`${target.base}${scenario.path}`, bodies[scenario.body], scenario.connections, 2, target.apiKey); // warm-up
  for (const pid of cpuPids) resetPeakRss(pid);
  const before = cpuPids.map(cpuTicks);
  const result = wrk(`${target.base}${scenario.path}`, bodies[scenario.body], scenario.connections, DURATION, target.apiKey);
  const after = cpuPids.map(cpuTicks);
  const cpuSeconds = (after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)) / CLK_TCK;
  const seconds = result.duration_us / 1e6;
  return {
    target: target.name,
    scenario: scenario.name,
    rps: result.requests / seconds,
    p50_ms: result.p50_us / 1000,
    p90_ms: result.p90_us / 1000,
    p99_ms: result.p99_us / 1000,
    errors: result.errors + result.non2xx,
    cpu_us_per_request: (cpuSeconds * 1e6) / Math.max(1, result.requests),
    peak_rss_mb: peakRssMb(cpuPids[0]),
  };
}

async function openStreamsRss(dir, bodies) {
  // 500 concurrent streams held open by the upstream; RSS of modelgate while they are open.
  const upstream = await startUpstream({ HOLD_STREAMS: '1' });
  const gateway = await startModelgate(upstream.base);
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: 600 });
  const controller = new AbortController();
  const body = readFileSync(bodies.stream);
  const idle = currentRssMb(gateway.pid);
  const responses = await Promise.all(Array.from({ length: 500 }, () =>
    request(`${gateway.base}/v1/chat/completions`, {
      method: 'POST', dispatcher: agent, signal: controller.signal, body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.apiKey}` },
    })));
  const open = responses.filter((response) => response.statusCode === 200).length;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rss = currentRssMb(gateway.pid);
  controller.abort();
  await agent.destroy().catch(() => undefined);
  await stop(gateway);
  await stop(upstream);
  return { open_streams: open, idle_rss_mb: idle, rss_with_streams_mb: rss };
}

async function soak() {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const bodies = writeBodies(dir);
  const upstream = await startUpstream();
  const gateway = await startModelgate(upstream.base);
  const samples = [];
  const minutes = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
  const end = Date.now() + minutes * 60_000;
  while (Date.now() < end) {
    // ~10 s of moderate load (10 connections), then an RSS sample.
    wrk(`${gateway.base}/v1/chat/completions`, bodies.chat, 10, 10, gateway.apiKey);
    samples.push({ t_s: Math.round((minutes * 60_000 - (end - Date.now())) / 1000), rss_mb: currentRssMb(gateway.pid) });
    process.stdout.write(`soak ${samples.at(-1).t_s}s rss ${samples.at(-1).rss_mb.toFixed(1)} MB\n`);
  }
  await stop(gateway);
  await stop(upstream);
  const settled = samples.slice(Math.floor(samples.length / 5));
  const values = settled.map((sample) => sample.rss_mb);
  return { samples, settled_min_mb: Math.min(...values), settled_max_mb: Math.max(...values) };
}

function printTable(rows) {
  const direct = new Map(rows.filter((row) => row.target === 'direct').map((row) => [row.scenario, row]));
  const header = ['scenario', 'target', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'Δp50 ms', 'ratio rps', 'cpu µs/req', 'peak RSS MB', 'errors'];
  const lines = rows.map((row) => {
    const base = direct.get(row.scenario);
    return [row.scenario, row.target, row.rps.toFixed(0), row.p50_ms.toFixed(3), row.p90_ms.toFixed(3), row.p99_ms.toFixed(3),
      base ? (row.p50_ms - base.p50_ms).toFixed(3) : '', base ? (row.rps / base.rps).toFixed(2) : '',
      row.cpu_us_per_request.toFixed(0), row.peak_rss_mb?.toFixed(1) ?? '', String(row.errors)];
  });
  const widths = header.map((title, index) => Math.max(title.length, ...lines.map((line) => line[index].length)));
  const format = (cells) => cells.map((cell, index) => cell.padStart(widths[index])).join('  ');
  process.stdout.write(`${format(header)}\n${lines.map(format).join('\n')}\n`);
}

async function main() {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  const machine = { cpus: cpus().length, cpu_model: cpus()[0]?.model, node: process.version, duration_s: DURATION, date: new Date().toISOString() };
  if (args.has('--soak')) {
    const result = await soak();
    mkdirSync(join(here, 'results'), { recursive: true });
    writeFileSync(join(here, 'results', `soak-${Date.now()}.json`), JSON.stringify({ machine, ...result }, null, 2));
    process.stdout.write(`RSS after warm-up: ${result.settled_min_mb.toFixed(1)}–${result.settled_max_mb.toFixed(1)} MB\n`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const bodies = writeBodies(dir);
  const upstream = await startUpstream();
  const bareProxyPort = await freePort();
  const bareProxy = await startProcess('bare proxy', process.execPath, [join(here, 'bare-proxy.mjs')], {
    env: { PORT: String(bareProxyPort), UPSTREAM: upstream.base },
    ready: /"port"/,
  });
  const targets = [
    { name: 'direct', base: upstream.base, pids: [upstream.pid] },
    { name: 'bare proxy', base: `http://127.0.0.1:${bareProxyPort}`, pids: [bareProxy.pid, upstream.pid] },
  ];
  const gateways = [];
  const embedded = await startModelgate(upstream.base);
  gateways.push(embedded);
  targets.push({ name: 'modelgate (sqlite)', base: embedded.base, apiKey: embedded.apiKey, pids: [embedded.pid, upstream.pid] });
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (databaseUrl && redisUrl) {
    const shared = await startModelgate(upstream.base, { databaseUrl, redisUrl });
    gateways.push(shared);
    targets.push({ name: 'modelgate (pg+redis)', base: shared.base, apiKey: shared.apiKey, pids: [shared.pid, upstream.pid] });
  }
  const rows = [];
  for (const scenario of SCENARIOS) {
    for (const target of targets) {
      // CPU is reported for the target's own process (first pid); the upstream's share is subtracted via direct.
      const row = measure(target, scenario, bodies, target.pids);
      rows.push(row);
      process.stderr.write(`${scenario.name} / ${target.name}: ${row.rps.toFixed(0)} req/s, p50 ${row.p50_ms.toFixed(3)} ms\n`);
    }
  }
  // CPU per request of the server alone: its process only (the upstream's own CPU is the "direct" row).
  for (const row of rows) {
    const direct = rows.find((candidate) => candidate.target === 'direct' && candidate.scenario === row.scenario);
    if (row.target !== 'direct' && direct) row.cpu_us_per_request = Math.max(0, row.cpu_us_per_request - direct.cpu_us_per_request);
  }
  const streaming = {};
  for (const target of targets) streaming[target.name] = ttfb(`${target.base}/v1/chat/completions`, bodies.stream, 300, target.apiKey);
  for (const gateway of gateways) await stop(gateway);
  await stop(bareProxy);
  await stop(upstream);
  const openStreams = await openStreamsRss(dir, bodies);
  printTable(rows);
  process.stdout.write('\nstreamed chat, concurrency 1 (µs):\n');
  for (const [name, values] of Object.entries(streaming)) process.stdout.write(`  ${name.padEnd(22)} ttfb p50 ${values.ttfb_p50_us.toFixed(0)}  p99 ${values.ttfb_p99_us.toFixed(0)}  total p50 ${values.total_p50_us.toFixed(0)}\n`);
  process.stdout.write(`\n500 open streams: ${openStreams.open_streams} open, RSS ${openStreams.idle_rss_mb?.toFixed(1)} MB idle → ${openStreams.rss_with_streams_mb?.toFixed(1)} MB\n`);
  mkdirSync(join(here, 'results'), { recursive: true });
  const file = join(here, 'results', `${Date.now()}.json`);
  writeFileSync(file, JSON.stringify({ machine, rows, streaming, open_streams: openStreams }, null, 2));
  process.stdout.write(`\nresults: ${file}\n`);
}

const cleanup = () => { for (const child of children) child.kill('SIGKILL'); };
process.on('exit', cleanup);
main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  cleanup();
  process.exit(1);
});
