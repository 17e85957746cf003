// CPU profile of modelgate under wrk load, covering the load window only: the profiler is
// started over the inspector protocol after start-up and warm-up, and stopped when wrk ends.
//
//   npm run bench:profile -- chat            # or any body of lib/bodies.mjs (stream, stream-tokens,
//                                            #   messagesStream, responsesStream, …), bad-input; default chat
//   BENCH_DURATION=10 BENCH_CONNECTIONS=50 npm run bench:profile -- image
//   npm run bench:profile -- chat --no-build # profile the dist/ as it is
//   npm run bench:profile -- chat --bare     # the bare proxy instead, for comparison
//   npm run bench:profile -- stream --minimal # the minimal gateway (the required work alone)
//   npm run bench:profile -- chat --allocations # bytes allocated per request instead of CPU
//
// Writes bench/results/profile-<scenario>-<time>.cpuprofile (open it in Chrome DevTools or
// speedscope for a flame graph) and prints the hottest areas and functions; with
// --allocations a .heapprofile (DevTools' memory tab) and the bytes each function allocates.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'undici';
import { PATHS as BODY_PATHS, writeBodies } from './lib/bodies.mjs';
import { printAllocations, printSummary, summarize, summarizeAllocations } from './lib/cpu-profile.mjs';
import { nodeClient, wrk } from './lib/load.mjs';
import { freePort, killAll, pinSelf } from './lib/processes.mjs';
import { startMinimalGateway, startReferenceProxy, startModelgate, startUpstream } from './lib/targets.mjs';

const bench = dirname(fileURLToPath(import.meta.url));
const root = join(bench, '..');
const args = process.argv.slice(2);
const scenario = args.find((arg) => !arg.startsWith('--')) ?? 'chat';
// Every body of the benchmark, and the bad-input burst beside chat traffic.
const PATHS = { ...BODY_PATHS, 'bad-input': BODY_PATHS.chat };
const seconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? (scenario === 'image' ? 10 : 50));

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function inspector(port) {
  const [{ webSocketDebuggerUrl }] = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const socket = new WebSocket(webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  const pending = new Map();
  let nextId = 1;
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  return {
    send(method, params = {}) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    close: () => socket.close(),
  };
}

/** Sampled CPU time (every 100 µs). */
const CPU = {
  extension: 'cpuprofile',
  async start(session) {
    await session.send('Profiler.enable');
    await session.send('Profiler.setSamplingInterval', { interval: 100 });
    await session.send('Profiler.start');
  },
  stop: async (session) => (await session.send('Profiler.stop')).profile,
  print: (profile, requests) => printSummary(summarize(profile, requests)),
};

/** Sampled allocations (one in every 4 KiB), the objects collected since included. */
const ALLOCATIONS = {
  extension: 'heapprofile',
  start: (session) =>
    session.send('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
  stop: async (session) => (await session.send('HeapProfiler.stopSampling')).profile,
  print: (profile, requests) => printAllocations(summarizeAllocations(profile, requests)),
};

/** The server to profile: modelgate, or with `--bare` / `--minimal` a reference for comparison. */
async function startProfiled(upstreamBase, nodeArgs) {
  if (args.includes('--bare')) return startReferenceProxy(bench, upstreamBase, nodeArgs);
  if (args.includes('--minimal')) return startMinimalGateway(root, bench, upstreamBase, nodeArgs);
  return startModelgate(root, upstreamBase, { nodeArgs });
}

async function main() {
  if (!PATHS[scenario]) throw new Error(`unknown scenario ${scenario}; use one of ${Object.keys(PATHS).join(', ')}`);
  pinSelf();
  if (!args.includes('--no-build')) execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  const bodies = writeBodies(mkdtempSync(join(tmpdir(), 'modelgate-bench-')));
  const upstream = await startUpstream(bench);
  const inspectPort = await freePort();
  const nodeArgs = [`--inspect=127.0.0.1:${inspectPort}`];
  const gateway = await startProfiled(upstream.base, nodeArgs);
  // The bad-input burst (bad-input.mjs at 200/s) runs next to good chat traffic.
  const load = { url: `${gateway.base}${PATHS[scenario]}`, bodyFile: bodies[scenario === 'bad-input' ? 'chat' : scenario], connections, apiKey: gateway.apiKey };
  // Warm-up: JIT, pools, and the routes' schemas, which compile one per turn of the event loop
  // after start-up and under load take several seconds (they showed as ~9 % of a chat profile).
  await wrk(bench, { ...load, seconds: 10 });
  const session = await inspector(inspectPort);
  const profiler = args.includes('--allocations') ? ALLOCATIONS : CPU;
  await profiler.start(session);
  const burst = scenario === 'bad-input' ? nodeClient(bench, 'bad-input.mjs', [gateway.base, gateway.apiKey, 200, seconds]) : undefined;
  const result = await wrk(bench, { ...load, seconds });
  await burst;
  const profile = await profiler.stop(session);
  session.close();
  gateway.child.kill('SIGTERM');
  upstream.child.kill('SIGTERM');

  mkdirSync(join(bench, 'results'), { recursive: true });
  const file = join(bench, 'results', `profile-${scenario}-${Date.now()}.${profiler.extension}`);
  writeFileSync(file, JSON.stringify(profile));
  const requests = result.requests;
  process.stdout.write(`${scenario}, ${connections} connections, ${seconds} s: ${(requests / (result.duration_us / 1e6)).toFixed(0)} req/s, ${result.non2xx + result.errors} errors\n`);
  profiler.print(profile, requests);
  process.stdout.write(`\nprofile: ${file}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  killAll();
  process.exit(1);
});
