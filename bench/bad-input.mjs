// A burst of bad requests at a fixed rate: malformed and oversized bodies, wrong types, bad
// keys, invalid media. Run next to good traffic to see whether it slows the good requests
// down or grows memory. Every answer must be a 4xx (or the server closing an oversized or
// unauthorised upload): a 5xx is a bug. Well-formed but costly JSON (deep nesting, tens of
// thousands of messages) is another matter — parsing it is real work — and is not in the mix.
//
// With HEAVY=1 the burst is only that costly JSON, to see what it costs.
//
// Usage: node bad-input.mjs BASE API_KEY RATE SECONDS → one JSON line with the outcomes.
import { request as httpRequest } from 'node:http';
import { Pool } from 'undici';

const [base, apiKey, rateText, secondsText] = process.argv.slice(2);
const rate = Number(rateText);
const seconds = Number(secondsText);
const pool = new Pool(base, { connections: 32, keepAliveTimeout: 60_000 });
const keyed = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` };
const json = (value) => JSON.stringify(value);
const chat = (messages, extra = {}) => json({ model: 'gpt-4o-mini', messages, ...extra });

const notBase64 = chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png,${'x'.repeat(512 * 1024)}` } }] }]);
// Big uploads declare their length and send the first 64 KiB, then wait for the answer: the
// gateway must answer from the headers, and the harness's own core is spared 21 MiB copies.
const FIRST_BYTES = Buffer.alloc(64 * 1024, ' ');

const KINDS = [
  { name: 'truncated json', headers: keyed, body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hel' },
  { name: 'not json', headers: keyed, body: 'model=gpt-4o-mini&messages=hello' },
  { name: 'wrong types', headers: keyed, body: chat('hello', { temperature: 'hot' }) },
  { name: 'unknown model', headers: keyed, body: json({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }) },
  { name: 'invalid key', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-mg-notavalidkey000000000000' }, body: chat([{ role: 'user', content: 'hi' }]) },
  { name: 'no key, 1 MiB body', headers: { 'content-type': 'application/json' }, declaredLength: 1024 * 1024 },
  { name: 'text/plain', headers: { ...keyed, 'content-type': 'text/plain' }, body: 'hello' },
  { name: 'image not base64', headers: keyed, body: notBase64 },
];
/** Every 20th request: rarer, each one is 21 MiB on the wire. */
const OVERSIZED = { name: 'oversized 21 MiB', headers: keyed, declaredLength: 21 * 1024 * 1024 }; // above the 20 MiB default limit

const HEAVY = [
  { name: 'deep nesting (195 KiB)', headers: keyed, body: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}` },
  { name: '40k messages, last invalid (1.2 MiB)', headers: keyed, body: chat([...Array.from({ length: 40_000 }, () => ({ role: 'user', content: 'hi' })), { role: 'nobody', content: 'x' }]) },
];
const heavy = process.env.HEAVY === '1';

const outcomes = Object.fromEntries((heavy ? HEAVY : [...KINDS, OVERSIZED]).map((kind) => [kind.name, {}]));
let sent = 0;
let serverErrors = 0;
const inFlight = new Set();

/** A big upload: the declared length, the first bytes, then the answer (or the connection closing). */
function sendDeclared(kind) {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    const req = httpRequest(
      { hostname, port, method: 'POST', path: '/v1/chat/completions', agent: false, headers: { ...kind.headers, 'content-length': kind.declaredLength } },
      (response) => {
        response.resume();
        response.once('end', () => {
          req.destroy();
          resolve(response.statusCode);
        });
      },
    );
    req.once('error', reject);
    req.write(FIRST_BYTES);
  });
}

async function send(kind) {
  let outcome;
  try {
    let status;
    if (kind.declaredLength !== undefined) {
      status = await sendDeclared(kind);
    } else {
      const response = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: kind.headers, body: kind.body });
      await response.body.dump();
      status = response.statusCode;
    }
    outcome = String(status);
    if (status >= 500) serverErrors += 1;
  } catch (error) {
    outcome = `closed (${error.code ?? error.name})`;
  }
  outcomes[kind.name][outcome] = (outcomes[kind.name][outcome] ?? 0) + 1;
}

const started = performance.now();
const end = started + seconds * 1000;
while (performance.now() < end) {
  const kind = heavy ? HEAVY[sent % HEAVY.length] : sent % 20 === 19 ? OVERSIZED : KINDS[sent % KINDS.length];
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
