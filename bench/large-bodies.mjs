// Bursts of large hostile bodies against one gateway: how long its event loop stalls and
// whether its memory comes back. The gateway and a fake OpenAI upstream run in this process
// (its event-loop delay is the gateway's, from perf_hooks.monitorEventLoopDelay); the bodies
// are sent from a child process, so sending them costs this loop nothing.
//
// Each burst is 8 bodies of 5 MB and one of 18 MB at once, all POST /v1/chat/completions:
// a 5 MB message content full of JSON escapes (JSON.parse's slow path, no fast cut-out), and
// an 18 MB body of 180,000 short messages (parsing and schema validation of many objects).
//
// Usage: npm run build && node --expose-gc bench/large-bodies.mjs [BURSTS] [--only=many|escaped]
// → one JSON line: the longest event-loop stall (ms) and p99 during the bursts (after one
// burst that warms up and is not measured), RSS before, at its peak, 5 s after the last burst
// (after a GC when --expose-gc is given, with the heap's part of it) and once it has settled
// back (and how many seconds after the burst that was), and the answers' statuses. --only sends just the 18 MB body or just the 5 MB ones.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const MB = 1024 * 1024;

if (process.argv[2] === '--client') {
  const [, , , base, key, burstsText, only] = process.argv;
  const escaped = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"' + 'line\\n\\"q\\" \\u00e9 '.repeat(Math.floor((5 * MB) / 20)) + '"}]}';
  const many = JSON.stringify({ model: 'gpt-4o-mini', messages: Array.from({ length: 180_000 }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `message number ${index} ${'x'.repeat(50)}` })) });
  const bodies = only === 'many' ? [many] : only === 'escaped' ? [escaped] : [...Array.from({ length: 8 }, () => escaped), many];
  const statuses = {};
  // Burst 0 warms the JIT up and is not measured.
  for (let burst = 0; burst <= Number(burstsText); burst += 1) {
    if (burst > 0) process.send({ burst: 'start' });
    const answers = await Promise.all(
      bodies.map(async (body) => {
        const response = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
        const text = await response.text();
        return response.status === 200 ? '200' : `${response.status} ${JSON.parse(text).error?.code}`;
      }),
    );
    for (const status of answers) statuses[status] = (statuses[status] ?? 0) + 1;
    if (burst > 0) process.send({ burst: 'end' });
  }
  process.send({ done: true, statuses, sizes: { escapedMB: +(escaped.length / MB).toFixed(1), manyMB: +(many.length / MB).toFixed(1) } });
  process.exit(0);
}

const bursts = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 3);
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length) ?? 'all';
const { loadConfig } = await import('../dist/config/index.js');
const { startGateway } = await import('../dist/server/gateway.js');

const upstream = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
  });
});
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const dir = mkdtempSync(join(tmpdir(), 'modelgate-large-bodies-'));
const env = {
  MODELGATE_PORT: '0',
  MODELGATE_DATA_DIR: join(dir, 'data'),
  MODELGATE_LOG_LEVEL: 'silent',
  MODELGATE_ADMIN_TOKEN: 'mg-admin-bench-token-0123456789abcdef',
  OPENAI_API_KEY: 'sk-bench-placeholder-0000000000000000',
  OPENAI_BASE_URL: `http://127.0.0.1:${upstream.address().port}/v1`,
};
const gateway = await startGateway(loadConfig({ env, cwd: dir }), { env });
const { secret } = await gateway.context.keys.store.create({ name: 'bench', projectId: 'default', scopes: ['model:request'], limits: { rpm: null, dailyTokens: null, monthlyCostUsd: null }, allowedModels: null, allowedTools: null, allowUnpriced: false });
await gateway.context.keys.cache.load();
// The route schemas compile in the background once the server listens (a second or two here).
await new Promise((resolve) => setTimeout(resolve, 3_000));

const gc = globalThis.gc ?? (() => undefined);
gc();
const rss = () => Math.round(process.memoryUsage.rss() / MB);
const before = rss();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
const delay = monitorEventLoopDelay({ resolution: 10 });

const result = await new Promise((resolve) => {
  const client = fork(new URL(import.meta.url), ['--client', gateway.url, secret, String(bursts), only]);
  client.on('message', (message) => {
    if (message.burst === 'start') delay.enable();
    if (message.burst === 'end') delay.disable();
    if (message.done) resolve(message);
  });
});
clearInterval(sampler);
await new Promise((resolve) => setTimeout(resolve, 5_000));
gc();
const after = rss();
const memory = process.memoryUsage();
// The log's thread holds its copy of the payloads until its own heap is collected, which V8
// does once the thread is idle for a while: RSS is sampled each second until it is back within
// 15 % of where it started, for at most a minute.
let settled = after;
let settledAfterS = 5;
while (settled > before * 1.15 && settledAfterS < 60) {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  settledAfterS += 1;
  settled = rss();
}
console.log(
  JSON.stringify({
    bursts,
    bodies: result.sizes,
    statuses: result.statuses,
    eventLoopDelayMs: { max: +(delay.max / 1e6).toFixed(1), p99: +(delay.percentile(99) / 1e6).toFixed(1), mean: +(delay.mean / 1e6).toFixed(1) },
    rssMB: { before, peak, after5s: after, settled, settledAfterS },
    heapAfter5sMB: { heapTotal: Math.round(memory.heapTotal / MB), heapUsed: Math.round(memory.heapUsed / MB), external: Math.round(memory.external / MB), arrayBuffers: Math.round(memory.arrayBuffers / MB) },
  }),
);
await gateway.close();
upstream.close();
rmSync(dir, { recursive: true, force: true });
