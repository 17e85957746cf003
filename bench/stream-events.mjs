// The per-event path of a streamed chat, alone: the OpenAI adapter's stream (server-sent event
// parsing, the chunk's JSON read) and the route's relay (the chunk as the caller sees it, the
// request log's transcript), fed the 22-chunk stream of fake-upstream.mjs one network chunk at
// a time through a dispatcher that answers in the same turn, into a response that keeps
// nothing. No sockets, no server: what changes here shows as CPU per stream.
//
//   npm run build && node bench/stream-events.mjs            # 5 runs of 20,000 streams
//   STREAMS=50000 RUNS=7 node bench/stream-events.mjs
//
// Prints µs per stream for each run and their median. Compare two builds on the same quiet
// machine, runs interleaved; a single figure means nothing across machines.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(pathToFileURL(join(root, 'dist', path)).href);
const { OpenAICompatibleClient } = await dist('providers/openai/client.js');
const { OpenAICompatibleChat } = await dist('providers/openai/chat.js');
const { sendChatStream } = await dist('server/routes/chat-stream.js');

const STREAMS = Number(process.env.STREAMS ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 5);

const created = 1_700_000_000;
const chunk = (delta, finish) => `data: ${JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_bench',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})}\n\n`;
const words = ['One', ' two', ' three', ' four', ' five', ' six', ' seven', ' eight', ' nine', ' ten', ' eleven', ' twelve', ' thirteen', ' fourteen', ' fifteen', ' sixteen', ' seventeen', ' eighteen', ' nineteen', ' twenty.'];
const usage = `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 } })}\n\n`;
const networkChunks = [chunk({ role: 'assistant', content: '' }, null), ...words.map((word) => chunk({ content: word }, null)), chunk({}, 'stop'), usage, 'data: [DONE]\n\n']
  .map((text) => Buffer.from(text));

/** A dispatcher whose answer is the stream above, one onResponseData per network chunk, in the caller's turn. */
const dispatcher = {
  dispatch(_options, handler) {
    const controller = { abort() {}, pause() {}, resume() {} };
    handler.onRequestStart(controller, {});
    handler.onResponseStart(controller, 200, { 'content-type': 'text/event-stream' }, 'OK');
    for (const data of networkChunks) handler.onResponseData(controller, data);
    handler.onResponseEnd(controller, {});
    return true;
  },
};
const http = { dispatcher, timeoutMs: 60_000, streamIdleTimeoutMs: 60_000 };
const chat = new OpenAICompatibleChat(new OpenAICompatibleClient({ name: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-bench', http }));

let written = 0;
const raw = {
  destroyed: false,
  writeHead() {},
  write(text) {
    written += text.length;
    return true;
  },
  end(text) {
    written += text.length;
  },
  destroy() {},
  once() {},
};
const reply = { hijack() {}, getHeaders: () => ({ 'x-request-id': 'req-bench' }), raw };
const signal = new AbortController().signal;
const body = { messages: [{ role: 'user', content: 'Count to twenty, one word per event.' }], stream_options: { include_usage: true } };

async function oneStream() {
  const stream = await chat.stream({ signal, requestId: 'req-bench', upstreamModel: 'gpt-4o-mini', body, passThrough: undefined });
  const record = { usage: null, responsePayload: null, pendingWork: null };
  sendChatStream(reply, stream, { requestId: 'req-bench', requestedModel: 'gpt-4o-mini', includeUsage: true, signal, record, transcriptCharacters: 32_768 });
  await record.pendingWork;
  if (record.responsePayload.choices[0].content.length === 0) throw new Error('no transcript');
}

async function run() {
  const started = process.hrtime.bigint();
  for (let index = 0; index < STREAMS; index += 1) await oneStream();
  return Number(process.hrtime.bigint() - started) / 1000 / STREAMS;
}

await run(); // warm-up: the JIT settles
const figures = [];
for (let index = 0; index < RUNS; index += 1) {
  figures.push(await run());
  process.stdout.write(`run ${index + 1}: ${figures.at(-1).toFixed(2)} µs per stream of ${networkChunks.length} network chunks\n`);
}
const sorted = [...figures].sort((a, b) => a - b);
process.stdout.write(`median: ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} µs per stream (${written > 0 ? 'frames written' : 'nothing written'})\n`);
