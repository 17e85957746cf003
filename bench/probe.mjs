// Latency at one connection, every target in turn: request i goes to each target one after
// the other (the order rotates each round), so noise from other work on the machine falls on
// all targets alike and their differences stay meaningful. Per target and request kind:
// time to the first body byte and to the end of the response, in µs.
//
// Usage: node probe.mjs SPEC.json → one JSON line.
//   SPEC: { targets: [{ name, base, apiKey?, headers? }], kinds: [{ name, path, bodyFile }], count, warmup }
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const kinds = spec.kinds.map((kind) => ({ ...kind, body: readFileSync(kind.bodyFile) }));
const targets = spec.targets.map((target) => ({
  ...target,
  pool: new Pool(target.base, { connections: 1, keepAliveTimeout: 60_000 }),
  headers: { 'content-type': 'application/json', ...target.headers, ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}) },
}));
const samples = Object.fromEntries(kinds.map((kind) => [kind.name, Object.fromEntries(targets.map((t) => [t.name, { ttfb: [], total: [] }]))]));
let failures = 0;

async function once(target, kind) {
  const start = process.hrtime.bigint();
  const response = await target.pool.request({ method: 'POST', path: kind.path, headers: target.headers, body: kind.body });
  let first;
  for await (const _chunk of response.body) first ??= process.hrtime.bigint();
  const end = process.hrtime.bigint();
  if (response.statusCode !== 200) failures += 1;
  return { ttfb: Number((first ?? end) - start) / 1000, total: Number(end - start) / 1000 };
}

for (let round = 0; round < spec.warmup + spec.count; round += 1) {
  for (const kind of kinds) {
    for (let offset = 0; offset < targets.length; offset += 1) {
      const target = targets[(round + offset) % targets.length];
      const sample = await once(target, kind);
      if (round < spec.warmup) continue;
      samples[kind.name][target.name].ttfb.push(sample.ttfb);
      samples[kind.name][target.name].total.push(sample.total);
    }
  }
}

function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { p50: at(50), p90: at(90), p99: at(99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

const result = { failures };
for (const [kind, byTarget] of Object.entries(samples)) {
  result[kind] = Object.fromEntries(
    Object.entries(byTarget).map(([name, values]) => [name, { ttfb_us: percentiles(values.ttfb), total_us: percentiles(values.total) }]),
  );
}
process.stdout.write(`${JSON.stringify(result)}\n`);
await Promise.all(targets.map((target) => target.pool.close()));
