// The PII and secrets guardrail checks alone on a 4 KB chat (docs/guardrails.md): the input
// stage of a call with both attached (every PII kind, the secrets check), on a chat of prose,
// code and a few look-alikes (dates, versions, order ids) with nothing to find, and on the same
// chat with an email and a card in it (found and masked). Runs the built code.
//
//   npm run build && node bench/guardrail-checks.mjs
//
// Environment: CALLS (per run, 20,000), RUNS (7). Prints the median CPU µs per call.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CALLS = Number(process.env.CALLS ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 7);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { Guardrails, runStage } = await import(pathToFileURL(join(root, 'dist/guardrails/index.js')).href);

const PARAGRAPH =
  'The migration ran on 2026-11-30 and moved 1,204 order records (ids 88231-99120) to the new table. ' +
  'Version 4.17.21 of the library fixed the date parsing; see the notes in section 3.2 for what changed. ' +
  'In the code, `const total = items.reduce((sum, item) => sum + item.price, 0);` sums the prices, and ' +
  'std::vector<int> keeps them in order. Call the team on Monday if the numbers look wrong. ';
const MESSAGES = [];
let size = 0;
while (size < 4096) {
  const content = PARAGRAPH.repeat(2);
  MESSAGES.push({ role: MESSAGES.length % 2 === 0 ? 'user' : 'assistant', content });
  size += content.length;
}
const clean = MESSAGES.map((message) => message.content);
const withFindings = [...clean.slice(0, -1), `${clean.at(-1)} Write to ada.lovelace@example.org, card 4111 1111 1111 1111.`];

const service = new Guardrails(
  [
    { name: 'no-pii', check: 'pii', stage: ['input'], action: 'mask', onError: 'closed', apply: { all: true, keys: [], projects: [], models: [] }, window: 256, options: {} },
    { name: 'no-secrets', check: 'secrets', stage: ['input'], action: 'block', onError: 'closed', apply: { all: true, keys: [], projects: [], models: [] }, window: 256, options: {} },
  ],
  { env: {} },
);
const attached = service.attached({ kind: 'anonymous' }, 'gpt-4o');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

for (const [name, texts] of [['4 KB chat, nothing found', clean], ['4 KB chat, an email and a card masked', withFindings]]) {
  const result = runStage(attached, 'input', texts);
  if (result instanceof Promise) throw new Error('the built-in checks are synchronous');
  const runs = [];
  for (let run = 0; run < RUNS; run += 1) {
    // CPU time of this process, not wall time: on a shared machine the neighbours' load stretches the wall clock.
    const started = process.cpuUsage();
    for (let call = 0; call < CALLS; call += 1) runStage(attached, 'input', texts);
    const used = process.cpuUsage(started);
    runs.push((used.user + used.system) / CALLS);
  }
  console.log(`${name} (${texts.join('').length} characters, ${result.verdicts.map((verdict) => `${verdict.guardrail}=${verdict.outcome}`).join(' ')}): ${median(runs).toFixed(1)} µs per call (median of ${RUNS} runs)`);
}
