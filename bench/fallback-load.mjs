// Load with one of two deployments failing: shows that clients see no error and that a request
// pays at most one failed attempt. Not a timed test; docs/routing.md quotes its output.
//
// Usage (after `npx tsc -p tsconfig.build.json`):
//   node bench/fallback-load.mjs [SECONDS_PER_PHASE=10] [CONCURRENCY=16]
//
// Two fake OpenAI-compatible upstreams answer after UPSTREAM_MS (default 20 ms), one of them
// failing (503 at once, connection reset, or a hang cut off by timeouts.firstByteMs). A
// gateway (bin/modelgate.js, its own process) routes gpt-4o-mini over both with one retry.
// Each phase sends chat completions, half of them streamed, from CONCURRENCY clients in a
// loop, and prints the error rate, latency percentiles and attempts per request, beside a
// baseline with the healthy deployment alone.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { Pool } from 'undici';

const seconds = Number(process.argv[2] ?? 10);
const concurrency = Number(process.argv[3] ?? 16);
const upstreamMs = Number(process.env.UPSTREAM_MS ?? 20);
const FIRST_BYTE_MS = 1_000;
const ADMIN_TOKEN = 'mg-admin-bench-token-0123456789abcdef';

const completion = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1_700_000_000, model: 'gpt-4o-mini', system_fingerprint: 'fp_bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
});
const frame = (delta, finish) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
const frames = [frame({ role: 'assistant', content: '' }, null), frame({ content: 'Hello!' }, null), frame({}, 'stop'), 'data: [DONE]\n\n'];

/** An upstream; `failure()` says how the current request fails (null: it answers). */
function upstream(failure) {
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const mode = failure();
      if (mode === 'reset') return void request.socket.resetAndDestroy();
      if (mode === 'hang') return; // never answered; the gateway gives up at firstByteMs
      if (mode === '503') {
        response.writeHead(503, { 'content-type': 'application/json' });
        return void response.end(JSON.stringify({ error: { message: 'The engine is currently overloaded.', type: 'server_error', param: null, code: null } }));
      }
      const streaming = JSON.parse(Buffer.concat(chunks).toString('utf8')).stream === true;
      setTimeout(() => {
        if (!streaming) {
          response.writeHead(200, { 'content-type': 'application/json' });
          return void response.end(completion);
        }
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const text of frames) response.write(text);
        response.end();
      }, upstreamMs);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/v1` })));
}

// The upstreams run on a thread of their own: the load generator's busy event loop must not
// delay their answers (the gateway would count that against the deployments).
if (!isMainThread) {
  let failingMode = null;
  const healthy = await upstream(() => null);
  const failing = await upstream(() => failingMode);
  parentPort.on('message', (message) => {
    failingMode = message;
  });
  parentPort.postMessage({ healthy: healthy.url, failing: failing.url });
  await new Promise(() => undefined);
}
const upstreams = new Worker(new URL(import.meta.url), { argv: process.argv.slice(2) });
const { healthy, failing } = await new Promise((resolve) => upstreams.once('message', (urls) => resolve({ healthy: { url: urls.healthy }, failing: { url: urls.failing } })));

function routing(phase) {
  const both = [
    { name: 'healthy', provider: 'openai', weight: 1 },
    { name: 'failing', provider: 'openai', baseUrl: failing.url, apiKeyEnv: 'OPENAI_API_KEY_2', weight: 1 },
  ];
  return [
    {
      model: 'gpt-4o-mini',
      deployments: phase.alone ? [both[0]] : both,
      retries: 1,
      backoffMs: 0,
      // No cooldown in the worst case: every other request meets the failing deployment.
      cooldown: phase.cooldown ? { failures: 3, windowMs: 60_000, durationMs: 30_000 } : { failures: 1_000_000, windowMs: 1_000, durationMs: 1 },
      timeouts: { firstByteMs: FIRST_BYTE_MS },
    },
  ];
}

async function startGateway(dir, phase) {
  const config = join(dir, 'modelgate.yaml');
  writeFileSync(config, JSON.stringify({ routing: routing(phase), logs: { payloads: false } }));
  const child = spawn(process.execPath, ['bin/modelgate.js', 'serve'], {
    env: {
      ...process.env,
      MODELGATE_CONFIG: config,
      MODELGATE_PORT: '0',
      MODELGATE_DATA_DIR: join(dir, 'data'),
      MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      MODELGATE_LOG_LEVEL: 'warn',
      OPENAI_API_KEY: 'sk-bench-1',
      OPENAI_API_KEY_2: 'sk-bench-2',
      OPENAI_BASE_URL: healthy.url,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(text);
      if (found) resolve(found[1]);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code})`)));
  });
  const created = await fetch(`${url}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['model:request'] }),
  });
  const { secret } = await created.json();
  return { child, url, secret };
}

function percentile(sorted, share) {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? 0;
}

async function runPhase(phase) {
  upstreams.postMessage(phase.failure ?? null);
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-fallback-bench-'));
  const gateway = await startGateway(dir, phase);
  const pool = new Pool(gateway.url, { connections: concurrency });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${gateway.secret}` };
  const bodies = [false, true].map((stream) => JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'Hi' }] }));
  const latencies = [];
  const attempts = {};
  let errors = 0;
  let sent = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        const body = bodies[sent++ % 2];
        try {
          const response = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
          const text = await response.body.text();
          if (response.statusCode !== 200 || text.includes('"error"')) errors += 1;
          const count = String(response.headers['x-modelgate-attempts']);
          attempts[count] = (attempts[count] ?? 0) + 1;
        } catch {
          errors += 1;
        }
        latencies.push(performance.now() - started);
      }
    }),
  );
  await pool.close();
  gateway.child.kill('SIGTERM');
  await new Promise((resolve) => gateway.child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const ms = (value) => value.toFixed(1);
  return {
    phase: phase.name,
    requests: latencies.length,
    errorRate: `${((100 * errors) / latencies.length).toFixed(2)} %`,
    p50: ms(percentile(latencies, 0.5)),
    p95: ms(percentile(latencies, 0.95)),
    p99: ms(percentile(latencies, 0.99)),
    max: ms(latencies.at(-1) ?? 0),
    attempts: Object.entries(attempts).map(([count, n]) => `${count}: ${n}`).join(', '),
  };
}

const phases = [
  { name: 'baseline: healthy deployment alone', alone: true },
  { name: 'one of two fails 503, no cooldown', failure: '503' },
  { name: 'one of two resets connections, no cooldown', failure: 'reset' },
  { name: `one of two hangs (firstByteMs ${FIRST_BYTE_MS}), no cooldown`, failure: 'hang' },
  { name: 'one of two fails 503, default cooldown', failure: '503', cooldown: true },
  { name: `one of two hangs (firstByteMs ${FIRST_BYTE_MS}), default cooldown`, failure: 'hang', cooldown: true },
];
const rows = [];
for (const phase of phases) rows.push(await runPhase(phase));
await upstreams.terminate();

process.stdout.write(`${seconds} s per phase, ${concurrency} concurrent clients, upstream answers in ${upstreamMs} ms; latencies in ms\n\n`);
process.stdout.write('| phase | requests | client errors | p50 | p95 | p99 | max | x-modelgate-attempts |\n|---|---|---|---|---|---|---|---|\n');
for (const row of rows) process.stdout.write(`| ${row.phase} | ${row.requests} | ${row.errorRate} | ${row.p50} | ${row.p95} | ${row.p99} | ${row.max} | ${row.attempts} |\n`);
