// Streamed chat at concurrency 1: time to first body byte and to the end, per request.
// Usage: node ttfb.mjs URL BODY_FILE COUNT [API_KEY]  → prints one JSON line.
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, bodyFile, countText, apiKey] = process.argv.slice(2);
const target = new URL(url);
const pool = new Pool(target.origin, { connections: 1 });
const body = readFileSync(bodyFile);
const headers = { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) };
const first = [];
const total = [];
const count = Number(countText);
for (let i = 0; i < count + 20; i += 1) {
  const start = process.hrtime.bigint();
  const response = await pool.request({ method: 'POST', path: target.pathname, headers, body });
  let firstAt;
  for await (const _chunk of response.body) firstAt ??= process.hrtime.bigint();
  const end = process.hrtime.bigint();
  if (i >= 20) { // the first 20 warm up connections and JITs
    first.push(Number((firstAt ?? end) - start) / 1000);
    total.push(Number(end - start) / 1000);
  }
}
const pct = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];
process.stdout.write(`${JSON.stringify({ ttfb_p50_us: pct(first, 50), ttfb_p99_us: pct(first, 99), total_p50_us: pct(total, 50), total_p99_us: pct(total, 99) })}\n`);
await pool.close();
