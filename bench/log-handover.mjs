// What handing a finished request's record to the request log's writer thread costs the event
// loop, by the form it crosses in: the parsed payloads cloned with the batch, the response as
// the JSON text the route already sent, everything as JSON text, or each record serialised
// apart (v8.serialize, buffers transferred). Batches of 100, the benchmark's small chat; the
// thread only reads what it gets. Prints µs per record spent on the event loop (building the
// record and posting its batch), medians of 6 rounds after one warm-up round.
//
//   taskset -c 1 node bench/log-handover.mjs
import { Worker } from 'node:worker_threads';
import { serialize } from 'node:v8';
const worker = new Worker(`const { parentPort } = require('node:worker_threads'); const v8 = require('node:v8');
parentPort.on('message', (m) => { if (m.buffers) for (const b of m.buffers) v8.deserialize(b); parentPort.postMessage(1); });`, { eval: true });
const request = { stream: false, model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello, who are you?' }] };
const response = { id: 'chatcmpl-bench', object: 'chat.completion', created: 1700000000, model: 'gpt-4o-mini', system_fingerprint: 'fp_bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } };
const responseJson = JSON.stringify(response);
const meta = (i) => ({ requestId: `01J${i}`, startedAt: Date.now(), endpoint: '/v1/chat/completions', platform: null, mode: 'chat', requestedModel: 'gpt-4o-mini', resolvedModel: 'gpt-4o-mini', provider: 'openai', streaming: false,
  usage: { promptTokens: 12, completionTokens: 9, totalTokens: 21, cachedPromptTokens: null }, imageCount: null, audioSeconds: null, media: null, logDetail: null, errorCode: null, upstreamLatencyMs: 3.2, agent: null, extra: null,
  caller: { keyId: 'key_1', projectId: 'default', fingerprint: 'key_1…abcd' }, status: 200, latencyMs: 5, cost: { microUsd: 12, startingPrice: false }, providerRequestIds: ['req_abc'] });
const variants = {
  'metadata only (no payloads)': (i) => meta(i),
  'objects, cloned per batch': (i) => ({ ...meta(i), requestPayload: request, responsePayload: response }),
  'objects, response as its JSON text': (i) => ({ ...meta(i), requestPayload: request, responsePayloadJson: responseJson }),
  'all JSON text (request stringified)': (i) => ({ ...meta(i), requestJson: JSON.stringify(request), responsePayloadJson: responseJson }),
  'v8.serialize per record, buffers transferred': (i) => serialize({ ...meta(i), requestPayload: request, responsePayloadJson: responseJson }),
};
const BATCH = 100, BATCHES = 300;
const ack = () => new Promise((r) => worker.once('message', r));
async function run(name, make) {
  let busy = 0n;
  for (let b = 0; b < BATCHES; b += 1) {
    const t0 = process.hrtime.bigint();
    const batch = [];
    for (let i = 0; i < BATCH; i += 1) batch.push(make(i));
    if (batch[0] instanceof Uint8Array) worker.postMessage({ buffers: batch }, batch.map((x) => x.buffer));
    else worker.postMessage({ batch });
    busy += process.hrtime.bigint() - t0;
    await ack();
  }
  return Number(busy) / 1000 / (BATCH * BATCHES);
}
const results = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let round = 0; round < 7; round += 1) for (const [name, make] of Object.entries(variants)) results[name].push(await run(name, make));
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const [name, xs] of Object.entries(results)) console.log(name.padEnd(48), med(xs.slice(1)).toFixed(2), 'µs per record on the event loop');
await worker.terminate();
