// A burst of bad requests at a fixed rate: malformed and oversized bodies, wrong types, bad
// keys, deep nesting, invalid media. Run next to good traffic to see whether it slows the
// good requests down or grows memory. Every answer must be a 4xx (or the server closing an
// oversized upload): a 5xx is a bug.
//
// Usage: node bad-input.mjs BASE API_KEY RATE SECONDS → one JSON line with the outcomes.
import { Pool } from 'undici';

const [base, apiKey, rateText, secondsText] = process.argv.slice(2);
const rate = Number(rateText);
const seconds = Number(secondsText);
const pool = new Pool(base, { connections: 32, keepAliveTimeout: 60_000 });
const keyed = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
const json = (value) => JSON.stringify(value);
const chat = (messages, extra = {}) => json({ model: 'gpt-4o-mini', messages, ...extra });

const deep = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`;
const manyMessages = chat([...Array.from({ length: 40_000 }, () => ({ role: 'user', content: 'hi' })), { role: 'nobody', content: 'x' }]);
const notBase64 = chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png,${'x'.repeat(512 * 1024)}` } }] }]);
const megabyte = Buffer.alloc(1024 * 1024, 'a');
const oversized = Buffer.alloc(21 * 1024 * 1024, ' '); // above the default 20 MiB body limit

const KINDS = [
  { name: 'truncated json', headers: keyed, body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hel' },
  { name: 'not json', headers: keyed, body: 'model=gpt-4o-mini&messages=hello' },
  { name: 'wrong types', headers: keyed, body: chat('hello', { temperature: 'hot' }) },
  { name: 'unknown model', headers: keyed, body: json({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }) },
  { name: 'invalid key', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-mg-notavalidkey000000000000' }, body: chat([{ role: 'user', content: 'hi' }]) },
  { name: 'no key, 1 MiB body', headers: { 'content-type': 'application/json' }, body: megabyte },
  { name: 'text/plain', headers: { ...keyed, 'content-type': 'text/plain' }, body: 'hello' },
  { name: 'deep nesting', headers: keyed, body: deep },
  { name: '40k messages, last invalid', headers: keyed, body: manyMessages },
  { name: 'image not base64', headers: keyed, body: notBase64 },
];
/** Every 20th request: rarer, each one is 21 MiB on the wire. */
const OVERSIZED = { name: 'oversized 21 MiB', headers: keyed, body: oversized };

const outcomes = Object.fromEntries([...KINDS, OVERSIZED].map((kind) => [kind.name, {}]));
let sent = 0;
let serverErrors = 0;
const inFlight = new Set();

async function send(kind) {
  let outcome;
  try {
    const response = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: kind.headers, body: kind.body });
    await response.body.dump();
    outcome = String(response.statusCode);
    if (response.statusCode >= 500) serverErrors += 1;
  } catch (error) {
    outcome = `closed (${error.code ?? error.name})`;
  }
  outcomes[kind.name][outcome] = (outcomes[kind.name][outcome] ?? 0) + 1;
}

const started = performance.now();
const end = started + seconds * 1000;
while (performance.now() < end) {
  const kind = sent % 20 === 19 ? OVERSIZED : KINDS[sent % KINDS.length];
  sent += 1;
  const promise = send(kind).finally(() => inFlight.delete(promise));
  inFlight.add(promise);
  const due = started + (sent * 1000) / rate;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}
await Promise.all(inFlight);
await pool.close();
process.stdout.write(`${JSON.stringify({ sent, rate_per_s: sent / ((performance.now() - started) / 1000), server_errors: serverErrors, outcomes })}\n`);
