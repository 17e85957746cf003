// The per-event path of a streamed chat, alone: the OpenAI adapter's stream (server-sent event
// parsing, the chunk's JSON read) and the route's relay (the chunk as the caller sees it, the
// request log's transcript), fed the 22-chunk stream of fake-upstream.mjs one network chunk at
// a time through a dispatcher that answers in the same turn, into a response that keeps
// nothing. No sockets, no server: what changes here shows as CPU per stream.
//
//   npm run build && node bench/stream-events.mjs            # 7 runs of 20,000 streams
//   BENCH_BASELINE_DIR=../before node bench/stream-events.mjs  # before and after, in one process
//
// Environment: STREAMS (per run, 20,000), RUNS (7). With BENCH_BASELINE_DIR (another built
// checkout) both builds run in one process, their runs interleaved, the first alternating,
// so a change shows on a busy machine too. Prints the median µs per stream of each build.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const STREAMS = Number(process.env.STREAMS ?? 20_000);
const RUNS = Number(process.env.RUNS ?? 7);
const roots = [['this build', join(dirname(fileURLToPath(import.meta.url)), '..')]];
if (process.env.BENCH_BASELINE_DIR) roots.push(['baseline', resolve(process.env.BENCH_BASELINE_DIR)]);

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

/** A response that keeps nothing but counts what it was sent. */
const raw = {
  destroyed: false,
  written: 0,
  writeHead() {},
  write(text) {
    this.written += text.length;
    return true;
  },
  end(text) {
    this.written += text.length;
  },
  destroy() {},
  once() {},
};
const reply = { hijack() {}, getHeaders: () => ({ 'x-request-id': 'req-bench' }), raw };
const signal = new AbortController().signal;
const body = { messages: [{ role: 'user', content: 'Count to twenty, one word per event.' }], stream_options: { include_usage: true } };

async function streamOf(root) {
  const load = (path) => import(pathToFileURL(join(root, 'dist', path)).href);
  const { OpenAICompatibleClient } = await load('providers/openai/client.js');
  const { OpenAICompatibleChat } = await load('providers/openai/chat.js');
  const { sendEventStream } = await load('server/routes/stream-relay.js');
  const { ChatCompletionsStreamEncoder } = await load('formats/chat-completions/stream.js');
  const { RequestCall } = await load('calls/request-call.js');
  const chat = new OpenAICompatibleChat(new OpenAICompatibleClient({ name: 'openai', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-bench', http }));
  return async () => {
    const stream = await chat.stream({ signal, requestId: 'req-bench', upstreamModel: 'gpt-4o-mini', body });
    // The request's call as the route holds it; its record is made as the HTTP layer makes it
    // at the response's end (no model calls to settle: the relay alone is measured).
    const call = new RequestCall({ requestId: 'req-bench', endpoint: '/v1/chat/completions', platform: null, startedAt: Date.now() }, undefined, []);
    const encoder = new ChatCompletionsStreamEncoder({ requestedModel: 'gpt-4o-mini', includeUsage: true, transcriptCharacters: 32_768 });
    sendEventStream(reply, stream, encoder, { requestId: 'req-bench', signal, call });
    await call.pendingWork;
    const { record } = call.finish({ status: 200, caller: { keyId: null, projectId: null, fingerprint: null } });
    if (record.responsePayload.choices[0].content.length === 0) throw new Error('no transcript');
  };
}

async function timed(oneStream) {
  const started = process.hrtime.bigint();
  for (let index = 0; index < STREAMS; index += 1) await oneStream();
  return Number(process.hrtime.bigint() - started) / 1000 / STREAMS;
}

const builds = await Promise.all(roots.map(async ([name, root]) => ({ name, oneStream: await streamOf(root) })));
const figures = new Map(builds.map(({ name }) => [name, []]));
for (let round = -1; round < RUNS; round += 1) {
  // Round -1 warms every function up; the build that goes first alternates.
  for (const { name, oneStream } of round % 2 === 0 ? builds : [...builds].reverse()) {
    const figure = await timed(oneStream);
    if (round >= 0) figures.get(name).push(figure);
  }
}
if (raw.written === 0) throw new Error('nothing was written');
for (const [name, values] of figures) {
  const sorted = [...values].sort((a, b) => a - b);
  process.stdout.write(`${name.padEnd(12)} median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} µs per stream of ${networkChunks.length} network chunks (runs ${sorted.map((value) => value.toFixed(2)).join(', ')})\n`);
}
