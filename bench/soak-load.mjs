// Moderate, steady traffic for the soak: a fixed rate of mixed requests (chat, streamed chat,
// embeddings, and now and then the 1 MiB image chat) for a while.
//
// Usage: node soak-load.mjs BASE API_KEY RATE SECONDS BODY_DIR → one JSON line with counts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';

const [base, apiKey, rateText, secondsText, bodyDir] = process.argv.slice(2);
const rate = Number(rateText);
const seconds = Number(secondsText);
const pool = new Pool(base, { connections: 32, keepAliveTimeout: 60_000 });
const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
const body = (name) => readFileSync(join(bodyDir, `${name}.json`));
// 20 slots: 12 chat, 5 streamed, 2 embeddings, 1 image.
const MIX = [
  ...Array(12).fill({ path: '/v1/chat/completions', body: body('chat') }),
  ...Array(5).fill({ path: '/v1/chat/completions', body: body('stream') }),
  ...Array(2).fill({ path: '/v1/embeddings', body: body('embeddings') }),
  { path: '/v1/chat/completions', body: body('image') },
];

const statuses = {};
let sent = 0;
const inFlight = new Set();
async function send(request) {
  let outcome;
  try {
    const response = await pool.request({ method: 'POST', path: request.path, headers, body: request.body });
    await response.body.dump();
    outcome = String(response.statusCode);
  } catch (error) {
    outcome = `error (${error.code ?? error.name})`;
  }
  statuses[outcome] = (statuses[outcome] ?? 0) + 1;
}

const started = performance.now();
const end = started + seconds * 1000;
while (performance.now() < end) {
  const promise = send(MIX[sent % MIX.length]).finally(() => inFlight.delete(promise));
  inFlight.add(promise);
  sent += 1;
  const wait = started + (sent * 1000) / rate - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
await Promise.all(inFlight);
await pool.close();
process.stdout.write(`${JSON.stringify({ sent, statuses })}\n`);
