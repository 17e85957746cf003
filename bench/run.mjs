// The modelgate benchmark. One run starts a fake OpenAI upstream, a bare pass-through proxy
// (the floor any Node gateway is measured against) and modelgate in its realistic
// configuration — key auth, a per-key rpm limit, request logging with payloads on — with
// embedded storage, and with PostgreSQL + Redis when their URLs are set, and drives the same
// load at each of them and directly at the upstream. Load generators run on core 0, every
// server on core 1. Only differences and ratios measured side by side in one run mean anything.
//
//   npm run bench                          # full run (≈ 30 min)
//   npm run bench -- --quick               # 3 s per measurement, shorter warm-up (≈ 10 min)
//   npm run bench -- --only=chat,latency   # some parts only (by prefix): chat, stream, stream 22 events, messages,
//                                          #   responses, gemini, fallback, embeddings, image, latency, bad-input, open-streams
//   npm run bench -- --targets=bare,modelgate  # some targets only (direct always runs)
//   npm run bench -- --workers             # also `serve --workers 2` (needs Redis)
//   npm run bench -- --lean                # also the lean proxy (lean-proxy.mjs): the transport alone
//   npm run bench -- --fastify             # also the Fastify proxy (fastify-proxy.mjs): the bare proxy inside the framework
//   npm run bench -- --minimal             # also the minimal gateway (minimal-gateway.mjs): the required work alone
//   npm run bench -- --peer=portkey        # also the Portkey gateway, installed from npm on first use (lib/peers.mjs)
//   npm run bench -- --soak                # 10 minutes of moderate traffic, RSS over time
//   npm run bench -- --no-build            # use dist/ as it is
//
// Environment: BENCH_DURATION (s per measurement, 10), BENCH_ROUNDS (3), BENCH_PROBE_COUNT
// (requests per target at one connection, 1000), BENCH_SOAK_MINUTES (10), BENCH_NICE (-10),
// BENCH_DATABASE_URL / BENCH_REDIS_URL (else TEST_DATABASE_URL / TEST_REDIS_URL),
// BENCH_BASELINE_DIR (another built checkout, run as "modelgate baseline": before/after),
// BENCH_BASELINE_NODE_ARGS (node flags for the baseline only, after the others),
// BENCH_NODE_ARGS (node flags for every modelgate, after those of `npm start`, e.g. --max-semi-space-size=16),
// BENCH_PEER_CACHE (where --peer installs its peers; else ~/.cache/modelgate-bench), BENCH_VERBOSE.
// Output: tables on stdout, ending with the budget read off the run (lib/budget.mjs);
// everything as JSON in bench/results/<time>.json.
import { execFileSync } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PATHS, writeBodies } from './lib/bodies.mjs';
import { nodeClient, wrk } from './lib/load.mjs';
import {
  coreBusySeconds,
  usageBetween,
  usageSnapshot,
  killAll,
  loadAverage,
  BOTH_CORES,
  LOAD_CORE,
  peakRssMb,
  pinSelf,
  resetPeakRss,
  rssMb,
  SERVER_CORE,
  stop,
} from './lib/processes.mjs';
import { startFlags, startMinimalGateway, startReferenceProxy, startModelgate, startUpstream } from './lib/targets.mjs';
import { startPortkey } from './lib/peers.mjs';
import { printTable, median } from './lib/report.mjs';
import { budgetLines, printBudget } from './lib/budget.mjs';

const bench = dirname(fileURLToPath(import.meta.url));
const root = join(bench, '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const quick = flag('quick');
const DURATION = Number(process.env.BENCH_DURATION ?? (quick ? 3 : 10));
const WARMUP = Math.min(2, DURATION);
const INITIAL_WARMUP = quick ? 5 : 10;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROBE_COUNT = Number(process.env.BENCH_PROBE_COUNT ?? (quick ? 300 : 1000));
/** Bad requests per second in the bad-input bursts; the costly-JSON burst is gentler. */
const BAD_INPUT_RATE = 200;
const HEAVY_INPUT_RATE = 20;
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
const log = (text) => process.stderr.write(`${text}\n`);

const SCENARIOS = [
  { name: 'chat', body: 'chat', connections: 50 },
  { name: 'stream', body: 'stream', connections: 50 },
  { name: 'stream 22 events', body: 'stream-tokens', connections: 50 },
  // The same stream in Anthropic's Messages format (translated from the chat stream): only modelgate serves it.
  { name: 'messages stream', body: 'messagesStream', connections: 50, modelgateOnly: true },
  // The same answer through OpenAI's Responses API (its own events passed through, with the caller's model): only modelgate serves it.
  { name: 'responses stream', body: 'responsesStream', connections: 50, modelgateOnly: true },
  // The same answer through Google's Gemini API (streamGenerateContent?alt=sse, translated from the chat stream): only modelgate serves it.
  { name: 'gemini stream', body: 'geminiStream', connections: 50, modelgateOnly: true },
  // The chat answer after a failed attempt: the model's one deployment answers 503, its fallback answers (only modelgate routes).
  { name: 'fallback', body: 'fallback', connections: 50, modelgateOnly: true },
  // The response cache (docs/caching.md): the same chat request answered from the cache, and answered anew and kept
  // (x-modelgate-cache: refresh: the lookup, the provider call and the store write a miss costs). Compare with chat.
  { name: 'cache hit', body: 'cached', connections: 50, modelgateOnly: true },
  { name: 'cache miss', body: 'cached', connections: 50, modelgateOnly: true, headers: { 'x-modelgate-cache': 'refresh' } },
  { name: 'embeddings', body: 'embeddings', connections: 50 },
  { name: 'image 1 MiB', body: 'image', connections: 10 },
].map((scenario) => ({ ...scenario, path: PATHS[scenario.body] }));

/** `--only=chat,latency`: throughput scenarios by name, and the sections latency, bad-input, open-streams. */
const ONLY = argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
const selected = (name) => ONLY === undefined || ONLY.some((prefix) => name.startsWith(prefix));
/** `--targets=bare,modelgate`: some targets only (direct always runs: it is the reference). */
const TARGETS = argv.find((arg) => arg.startsWith('--targets='))?.slice('--targets='.length).split(',');
/** `--peer=portkey`: peer gateways, installed from npm on first use (lib/peers.mjs). */
const PEERS = argv.find((arg) => arg.startsWith('--peer='))?.slice('--peer='.length).split(',') ?? [];
for (const peer of PEERS) if (peer !== 'portkey') throw new Error(`--peer=${peer}: the peers are: portkey`);
const wanted = (name) => name === 'direct' || TARGETS === undefined || TARGETS.some((prefix) => name.startsWith(prefix));

/** `wrk --version` prints its version and exits 1. */
function wrkVersion() {
  try {
    return execFileSync('wrk', ['--version'], { encoding: 'utf8' }).split('\n')[0].trim();
  } catch (error) {
    return String(error.stdout).split('\n')[0].trim();
  }
}

function machineFacts() {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  };
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    wrk: wrkVersion(),
    commit: git('rev-parse', '--short', 'HEAD'),
    uncommitted_changes: (git('status', '--porcelain') ?? '').length > 0,
    load_average_at_start: loadAverage(),
    duration_s: DURATION,
    rounds: ROUNDS,
    date: new Date().toISOString(),
  };
}

/**
 * One wrk measurement of one target: throughput, latency, the CPU each server used per
 * request (its own process tree: a primary and its workers), peak RSS, and how busy both
 * cores were with other work (a busy server core means the figures are noisy).
 */
async function measure(target, upstream, scenario, bodies) {
  const load = { url: `${target.base}${scenario.path}`, bodyFile: bodies[scenario.body], connections: scenario.connections, apiKey: target.apiKey, headers: { ...target.headers, ...scenario.headers } };
  await wrk(bench, { ...load, seconds: WARMUP });
  resetPeakRss(target.pid);
  const groups = { server: target.pid, upstream: upstream.pid };
  const usageBefore = usageSnapshot(groups);
  const coresBefore = coreBusySeconds();
  const result = await wrk(bench, { ...load, seconds: DURATION });
  const used = usageBetween(usageBefore, usageSnapshot(groups));
  const coresAfter = coreBusySeconds();
  const seconds = result.duration_us / 1e6;
  const isDirect = target.pid === upstream.pid;
  const own = isDirect ? used.upstream : used.server;
  // The server core runs the target and the upstream: both are ours.
  const ours = isDirect ? own.cpu : own.cpu + used.upstream.cpu;
  const perRequest = (value) => value / Math.max(1, result.requests);
  return {
    rps: result.requests / seconds,
    p50_ms: result.p50_us / 1000,
    p90_ms: result.p90_us / 1000,
    p99_ms: result.p99_us / 1000,
    errors: result.errors + result.non2xx,
    cpu_us_per_request: perRequest(own.cpu * 1e6),
    // The event loop's share: the main thread of each process, without the request log's
    // writer thread, the libuv pool and V8's helpers.
    loop_cpu_us_per_request: perRequest(own.loop * 1e6),
    // Part of it: system calls and page faults (each costs microseconds in a VM).
    system_us_per_request: perRequest(own.system * 1e6),
    minor_faults_per_request: perRequest(own.faults),
    upstream_cpu_us_per_request: perRequest(used.upstream.cpu * 1e6),
    peak_rss_mb: peakRssMb(target.pid),
    // Share of the server core used by processes other than ours, and how busy the load core was.
    server_core_other_pct: Math.max(0, ((coresAfter[SERVER_CORE] - coresBefore[SERVER_CORE] - ours) / seconds) * 100),
    load_core_busy_pct: ((coresAfter[LOAD_CORE] - coresBefore[LOAD_CORE]) / seconds) * 100,
  };
}

/** Medians over the rounds (peak RSS: the highest; errors: the sum). */
function combine(samples) {
  const row = {};
  for (const key of Object.keys(samples[0])) row[key] = median(samples.map((sample) => sample[key]));
  row.peak_rss_mb = Math.max(...samples.map((sample) => sample.peak_rss_mb));
  row.errors = samples.reduce((sum, sample) => sum + sample.errors, 0);
  return row;
}

/** This checkout's modelgate (not a proxy, nor a baseline checkout that may predate the format). */
const servesFormats = (target) => target.name.startsWith('modelgate') && !target.name.includes('baseline');

async function throughput(allTargets, upstream, bodies) {
  const rows = [];
  for (const scenario of SCENARIOS.filter((candidate) => selected(candidate.name))) {
    const targets = allTargets.filter((target) => !target.skips?.includes(scenario.name) && (!scenario.modelgateOnly || servesFormats(target)));
    // Until the JIT has settled, CPU per request keeps falling: every target gets a long warm-up first.
    for (const target of targets) {
      await wrk(bench, { url: `${target.base}${scenario.path}`, bodyFile: bodies[scenario.body], connections: scenario.connections, apiKey: target.apiKey, headers: { ...target.headers, ...scenario.headers }, seconds: INITIAL_WARMUP });
    }
    const samples = new Map(targets.map((target) => [target.name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      // The order rotates each round, so no target always follows the same one.
      for (let offset = 0; offset < targets.length; offset += 1) {
        const target = targets[(round + offset) % targets.length];
        const sample = await measure(target, upstream, scenario, bodies);
        samples.get(target.name).push(sample);
        log(`${scenario.name} / ${target.name} (round ${round + 1}): ${sample.rps.toFixed(0)} req/s, p50 ${sample.p50_ms.toFixed(3)} ms, ` +
          `${sample.cpu_us_per_request.toFixed(0)} µs CPU/req, other load on the server core ${sample.server_core_other_pct.toFixed(0)}%`);
      }
    }
    for (const target of targets) {
      const rounds = samples.get(target.name);
      rows.push({ scenario: `${scenario.name} c=${scenario.connections}`, target: target.name, ...combine(rounds), rounds });
    }
  }
  return rows;
}

/** One connection, targets interleaved request by request (see probe.mjs). */
async function latencyAtOneConnection(targets, bodies, dir) {
  const spec = {
    targets: targets.map(({ name, base, apiKey, headers }) => ({ name, base, apiKey, headers })),
    kinds: [
      { name: 'chat', path: '/v1/chat/completions', bodyFile: bodies.chat },
      { name: 'stream', path: '/v1/chat/completions', bodyFile: bodies.stream },
    ],
    count: PROBE_COUNT,
    warmup: 100,
  };
  const specFile = join(dir, 'probe.json');
  writeFileSync(specFile, JSON.stringify(spec));
  return nodeClient(bench, 'probe.mjs', [specFile]);
}

/**
 * Good traffic alone, then next to a burst of malformed and oversized requests, twice (memory
 * that grows with every burst would show as a second step up), then alone again; and next to
 * a burst of well-formed but costly JSON. The good requests' latency and the gateway's RSS.
 */
async function badInputUnderLoad(gateway, bodies) {
  const good = { url: `${gateway.base}/v1/chat/completions`, bodyFile: bodies.chat, connections: 10, apiKey: gateway.apiKey, seconds: DURATION };
  const summary = (result) => ({ rps: result.requests / (result.duration_us / 1e6), p50_ms: result.p50_us / 1000, p99_ms: result.p99_us / 1000, errors: result.errors + result.non2xx });
  const withBurst = async (rate, env = {}) => {
    const cores = coreBusySeconds();
    const [result, burst] = await Promise.all([wrk(bench, good), nodeClient(bench, 'bad-input.mjs', [gateway.base, gateway.apiKey, rate, DURATION], env)]);
    const busy = coreBusySeconds();
    // A busy load core (wrk and the burst client share it) limits the good traffic too.
    const pct = (core) => ((busy[core] - cores[core]) / DURATION) * 100;
    return { good: summary(result), burst, rss_after_mb: rssMb(gateway.pid), server_core_busy_pct: pct(SERVER_CORE), load_core_busy_pct: pct(LOAD_CORE) };
  };
  await wrk(bench, { ...good, seconds: WARMUP });
  const rssBefore = rssMb(gateway.pid);
  const alone = summary(await wrk(bench, good));
  const first = await withBurst(BAD_INPUT_RATE);
  const second = await withBurst(BAD_INPUT_RATE);
  const after = summary(await wrk(bench, good));
  const heavy = await withBurst(HEAVY_INPUT_RATE, { HEAVY: '1' });
  return { rate_per_s: BAD_INPUT_RATE, rss_before_mb: rssBefore, good_alone: alone, first_burst: first, second_burst: second, good_after: after, heavy_rate_per_s: HEAVY_INPUT_RATE, heavy_burst: heavy };
}

/** RSS of a fresh modelgate holding 500 streams open (the upstream sends one frame and waits). */
async function openStreams(bodies) {
  const upstream = await startUpstream(bench, { HOLD_STREAMS: '1' });
  const gateway = await startModelgate(root, upstream.base);
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: 600 });
  const controller = new AbortController();
  setMaxListeners(1000, controller.signal); // one signal ends all 500 streams
  const body = readFileSync(bodies.stream);
  // Warm it as the other measurements are, so the figure is about the streams, not the JIT.
  await wrk(bench, { url: `${gateway.base}/v1/embeddings`, bodyFile: bodies.embeddings, connections: 10, seconds: WARMUP, apiKey: gateway.apiKey });
  const idle = rssMb(gateway.pid);
  resetPeakRss(gateway.pid);
  const firstFrames = await Promise.all(
    Array.from({ length: 500 }, async () => {
      const response = await request(`${gateway.base}/v1/chat/completions`, {
        method: 'POST', dispatcher: agent, signal: controller.signal, body,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.apiKey}` },
      });
      if (response.statusCode !== 200) return false;
      // Open means the first frame came through.
      for await (const _chunk of response.body) return true;
      return false;
    }).map((promise) => promise.catch(() => false)),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const withStreams = rssMb(gateway.pid);
  const peak = peakRssMb(gateway.pid);
  controller.abort();
  await agent.destroy().catch(() => undefined);
  await gateway.close();
  await stop(upstream);
  return { open_streams: firstFrames.filter(Boolean).length, idle_rss_mb: idle, rss_with_streams_mb: withStreams, peak_rss_mb: peak };
}

async function soak(bodies, dir) {
  const upstream = await startUpstream(bench);
  const gateway = await startModelgate(root, upstream.base);
  const minutes = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
  const rate = Number(process.env.BENCH_SOAK_RATE ?? 200);
  const samples = [{ t_s: 0, rss_mb: rssMb(gateway.pid) }];
  const started = Date.now();
  const load = nodeClient(bench, 'soak-load.mjs', [gateway.base, gateway.apiKey, rate, minutes * 60, dir]);
  let finished = false;
  load.finally(() => (finished = true)).catch(() => undefined);
  while (!finished) {
    await Promise.race([load, new Promise((resolve) => setTimeout(resolve, 10_000))]).catch(() => undefined);
    const sample = { t_s: Math.round((Date.now() - started) / 1000), rss_mb: rssMb(gateway.pid) };
    samples.push(sample);
    log(`soak ${sample.t_s} s: RSS ${sample.rss_mb.toFixed(1)} MB`);
  }
  const traffic = await load;
  await gateway.close();
  await stop(upstream);
  // The first fifth is warm-up (JIT, pools, caches filling); flatness is judged on the rest:
  // every sample against the median, and the trend (least-squares slope), which is what a leak shows.
  const settledSamples = samples.filter((sample) => sample.t_s >= (minutes * 60) / 5);
  const settled = settledSamples.map((sample) => sample.rss_mb);
  const middle = median(settled);
  const meanT = settledSamples.reduce((sum, sample) => sum + sample.t_s, 0) / settledSamples.length;
  const meanRss = settled.reduce((sum, value) => sum + value, 0) / settled.length;
  const covariance = settledSamples.reduce((sum, sample) => sum + (sample.t_s - meanT) * (sample.rss_mb - meanRss), 0);
  const variance = settledSamples.reduce((sum, sample) => sum + (sample.t_s - meanT) ** 2, 0);
  return {
    minutes,
    rate_per_s: rate,
    traffic,
    samples,
    settled_median_mb: middle,
    settled_min_mb: Math.min(...settled),
    settled_max_mb: Math.max(...settled),
    settled_max_deviation_pct: Math.max(...settled.map((value) => Math.abs(value - middle) / middle)) * 100,
    settled_trend_mb_per_minute: (covariance / variance) * 60,
  };
}

/**
 * A config file routing gpt-4o (the fallback scenario's model) to one deployment that answers
 * every request with a 503, with gpt-4o-mini as its fallback and no retry: every request makes
 * the failed attempt and then the one that answers. The deployment never cools down (a billion
 * failures a millisecond), so no request skips the failed attempt.
 */
function routingConfig(upstreamBase, dir) {
  const file = join(dir, 'modelgate.yaml');
  writeFileSync(
    file,
    [
      'routing:',
      '  - model: gpt-4o',
      '    deployments:',
      '      - { provider: openai, name: openai-down, baseUrl: "' + `${upstreamBase}/overloaded/v1` + '" }',
      '    fallbacks: [gpt-4o-mini]',
      '    cooldown: { failures: 1000000000, windowMs: 1 }',
      '',
    ].join('\n'),
  );
  return file;
}

async function startTargets(upstream, dir) {
  const targets = [{ name: 'direct', base: upstream.base, pid: upstream.pid }];
  if (wanted('bare proxy')) {
    const bare = await startReferenceProxy(bench, upstream.base);
    targets.push({ name: 'bare proxy', base: bare.base, pid: bare.pid, close: () => stop(bare) });
  }
  if (flag('lean') && wanted('lean proxy')) {
    const lean = await startReferenceProxy(bench, upstream.base, [], { name: 'lean proxy', script: 'lean-proxy.mjs' });
    targets.push({ name: 'lean proxy', base: lean.base, pid: lean.pid, close: () => stop(lean) });
  }
  if (flag('fastify') && wanted('fastify proxy')) {
    const fastify = await startReferenceProxy(bench, upstream.base, startFlags(root), { name: 'fastify proxy', script: 'fastify-proxy.mjs' });
    targets.push({ name: 'fastify proxy', base: fastify.base, pid: fastify.pid, close: () => stop(fastify) });
  }
  if (flag('minimal') && wanted('minimal gateway')) {
    const minimal = await startMinimalGateway(root, bench, upstream.base);
    // Its log would keep a 1 MiB image whole (modelgate keeps a digest): not a reference there.
    targets.push({ name: 'minimal gateway', base: minimal.base, apiKey: minimal.apiKey, pid: minimal.pid, skips: ['image 1 MiB'], close: () => stop(minimal) });
  }
  if (PEERS.includes('portkey') && wanted('portkey')) {
    const portkey = await startPortkey(upstream.base);
    targets.push({ name: portkey.name, base: portkey.base, apiKey: portkey.apiKey, headers: portkey.headers, pid: portkey.pid, close: () => stop(portkey) });
  }
  const modelgates = [['modelgate', {}]];
  // Another checkout (built), measured side by side: what a change bought.
  // With BENCH_BASELINE_NODE_ARGS (and BENCH_BASELINE_DIR=. for the same build): what node flags buy.
  if (process.env.BENCH_BASELINE_DIR) {
    const nodeArgs = (process.env.BENCH_BASELINE_NODE_ARGS ?? '').split(' ').filter(Boolean);
    modelgates.push(['modelgate baseline', { root: process.env.BENCH_BASELINE_DIR, nodeArgs }]);
  }
  if (DATABASE_URL && REDIS_URL) {
    modelgates.push(['modelgate pg+redis', { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL }]);
    const baseline = modelgates.find(([name]) => name === 'modelgate baseline');
    if (baseline) modelgates.push(['modelgate baseline pg+redis', { ...baseline[1], databaseUrl: DATABASE_URL, redisUrl: REDIS_URL }]);
  } else log('PostgreSQL + Redis variant skipped: set BENCH_DATABASE_URL and BENCH_REDIS_URL (or TEST_DATABASE_URL and TEST_REDIS_URL)');
  if (flag('workers')) {
    if (REDIS_URL) {
      const name = `modelgate ×2 ${DATABASE_URL ? 'pg' : 'sqlite'}+redis`;
      modelgates.push([name, { ...(DATABASE_URL ? { databaseUrl: DATABASE_URL } : {}), redisUrl: REDIS_URL, workers: 2 }]);
    } else log('--workers skipped: more than one worker needs REDIS_URL (set BENCH_REDIS_URL or TEST_REDIS_URL)');
  }
  const startup = {};
  const routing = routingConfig(upstream.base, dir);
  for (const [name, options] of modelgates.filter(([name]) => wanted(name))) {
    // The routing entry of the fallback scenario; a baseline checkout may predate routing.
    const env = options.root === undefined ? { MODELGATE_CONFIG: routing } : {};
    const gateway = await startModelgate(options.root ?? root, upstream.base, { ...options, name, env });
    startup[name] = gateway.startupMs;
    // A key made on one worker reaches the others within the key cache's refresh interval.
    if ((options.workers ?? 1) > 1) await new Promise((resolve) => setTimeout(resolve, 2000));
    targets.push({ name, base: gateway.base, apiKey: gateway.apiKey, pid: gateway.pid, close: () => gateway.close() });
  }
  return { targets, startup };
}

/**
 * What a second worker adds on this machine. Pinned to one core (the main table) two workers
 * can only share it; here the servers may use both cores, as a deployment would, with wrk
 * still on core 0 (so it competes with them).
 */
async function workersOnBothCores(bodies) {
  const storage = { ...(DATABASE_URL ? { databaseUrl: DATABASE_URL } : {}), redisUrl: REDIS_URL };
  const upstream = await startUpstream(bench, {}, BOTH_CORES);
  const rows = [];
  for (const workers of [1, 2]) {
    const gateway = await startModelgate(root, upstream.base, { ...storage, workers, core: BOTH_CORES, name: `modelgate ×${workers}` });
    if (workers > 1) await new Promise((resolve) => setTimeout(resolve, 2000)); // the key reaches the other worker
    const target = { name: `modelgate ×${workers} (both cores)`, base: gateway.base, apiKey: gateway.apiKey, pid: gateway.pid };
    const chat = SCENARIOS[0];
    await wrk(bench, { url: `${target.base}${chat.path}`, bodyFile: bodies.chat, connections: chat.connections, apiKey: target.apiKey, seconds: INITIAL_WARMUP });
    const rounds = [];
    for (let round = 0; round < ROUNDS; round += 1) rounds.push(await measure(target, upstream, chat, bodies));
    rows.push({ scenario: `chat c=${chat.connections}, servers on both cores`, target: target.name, ...combine(rounds), rounds });
    await gateway.close();
  }
  await stop(upstream);
  return rows;
}

function printLatency(latency, targets) {
  const direct = latency.chat.direct;
  const directStream = latency.stream.direct;
  const line = (cells) => cells.map((cell, index) => (index === 0 ? cell.padEnd(22) : cell.padStart(10))).join('');
  process.stdout.write('\nOne connection, targets interleaved (ms; Δ = difference to direct):\n');
  process.stdout.write(`${line(['target', 'chat p50', 'Δp50', 'chat p99', 'Δp99', 'ttfb p50', 'Δttfb p50', 'ttfb p99', 'stream end'])}\n`);
  for (const { name } of targets) {
    const chat = latency.chat[name].total_us;
    const stream = latency.stream[name];
    const ms = (us) => (us / 1000).toFixed(3);
    process.stdout.write(`${line([name, ms(chat.p50), ms(chat.p50 - direct.total_us.p50), ms(chat.p99), ms(chat.p99 - direct.total_us.p99),
      ms(stream.ttfb_us.p50), ms(stream.ttfb_us.p50 - directStream.ttfb_us.p50), ms(stream.ttfb_us.p99), ms(stream.total_us.p50)])}\n`);
  }
}

function printBadInput(result) {
  const row = (name, value, rss) => `  ${name.padEnd(22)} ${value.rps.toFixed(0).padStart(6)} req/s  p50 ${value.p50_ms.toFixed(3)} ms  p99 ${value.p99_ms.toFixed(3)} ms  errors ${value.errors}${rss === undefined ? '' : `  RSS after ${rss.toFixed(1)} MB`}\n`;
  const burst = (value) => `${value.burst.sent} sent at ${value.burst.rate_per_s.toFixed(0)}/s, ${value.burst.server_errors} answered 5xx`;
  process.stdout.write(`\nBad input under load (good chat at 10 connections; RSS ${result.rss_before_mb.toFixed(1)} MB before):\n`);
  process.stdout.write(row('good alone', result.good_alone) + row('good + 1st burst', result.first_burst.good, result.first_burst.rss_after_mb) +
    row('good + 2nd burst', result.second_burst.good, result.second_burst.rss_after_mb) + row('good alone again', result.good_after) +
    row('good + costly JSON', result.heavy_burst.good, result.heavy_burst.rss_after_mb));
  process.stdout.write(`  bursts: ${burst(result.first_burst)}; ${burst(result.second_burst)}; costly JSON ${burst(result.heavy_burst)}\n`);
  const cores = (value) => `server core ${value.server_core_busy_pct.toFixed(0)}% busy, load core ${value.load_core_busy_pct.toFixed(0)}%`;
  process.stdout.write(`  during the bursts: ${cores(result.first_burst)}; ${cores(result.second_burst)}; costly JSON: ${cores(result.heavy_burst)}\n`);
  for (const [kind, outcomes] of Object.entries({ ...result.first_burst.burst.outcomes, ...result.heavy_burst.burst.outcomes })) {
    process.stdout.write(`    ${kind.padEnd(38)} ${JSON.stringify(outcomes)}\n`);
  }
}

function save(name, data) {
  mkdirSync(join(bench, 'results'), { recursive: true });
  const file = join(bench, 'results', `${name}.json`);
  writeFileSync(file, JSON.stringify(data, null, 2));
  process.stdout.write(`\nresults: ${file}\n`);
}

async function main() {
  pinSelf();
  if (!flag('no-build')) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  const machine = machineFacts();
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const bodies = writeBodies(dir);
  if (flag('soak')) {
    const result = await soak(bodies, dir);
    process.stdout.write(`soak ${result.minutes} min at ${result.rate_per_s}/s: RSS ${result.settled_min_mb.toFixed(1)}–${result.settled_max_mb.toFixed(1)} MB after warm-up ` +
      `(median ${result.settled_median_mb.toFixed(1)} MB, largest deviation ${result.settled_max_deviation_pct.toFixed(1)}%, ` +
      `trend ${result.settled_trend_mb_per_minute.toFixed(2)} MB/min); ${JSON.stringify(result.traffic)}\n`);
    const budget = budgetLines({ soak: result });
    printBudget(budget);
    save(`soak-${Date.now()}`, { machine, soak: result, budget });
    return;
  }

  const upstream = await startUpstream(bench);
  const { targets, startup } = await startTargets(upstream, dir);
  const results = { machine, startup_ms: startup };
  results.rows = await throughput(targets, upstream, bodies);
  if (results.rows.length > 0) printTable(results.rows);
  if (selected('latency')) {
    log('one connection: probing every target in turn');
    results.latency_one_connection = await latencyAtOneConnection(targets, bodies, dir);
    printLatency(results.latency_one_connection, targets);
  }
  const modelgate = targets.find((target) => target.name === 'modelgate');
  if (selected('bad-input') && modelgate) {
    log('bad input under load');
    results.bad_input = await badInputUnderLoad(modelgate, bodies);
    printBadInput(results.bad_input);
  }
  for (const target of targets) await target.close?.();
  await stop(upstream);
  if (flag('workers') && REDIS_URL) {
    log('workers on both cores');
    results.workers_both_cores = await workersOnBothCores(bodies);
    for (const row of results.workers_both_cores) {
      process.stdout.write(`\n${row.scenario}: ${row.target} ${row.rps.toFixed(0)} req/s, p50 ${row.p50_ms.toFixed(2)} ms, p99 ${row.p99_ms.toFixed(2)} ms, ${row.cpu_us_per_request.toFixed(0)} µs CPU/req, peak RSS ${row.peak_rss_mb.toFixed(0)} MB`);
    }
    process.stdout.write('\n');
  }
  if (selected('open-streams')) {
    log('500 open streams');
    const streams = (results.open_streams = await openStreams(bodies));
    process.stdout.write(`\n500 open streams: ${streams.open_streams} open; RSS ${streams.idle_rss_mb.toFixed(1)} MB idle → ${streams.rss_with_streams_mb.toFixed(1)} MB (peak ${streams.peak_rss_mb.toFixed(1)} MB)\n`);
  }
  process.stdout.write(`start-up to listening: ${Object.entries(startup).map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`).join(', ')}\n`);
  results.load_average_at_end = loadAverage();
  results.budget = budgetLines(results);
  printBudget(results.budget);
  save(String(Date.now()), results);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  killAll();
  process.exit(1);
});
