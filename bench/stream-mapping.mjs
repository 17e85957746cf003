// The adapters' stream mapping alone: a stream of 20 text deltas as Anthropic and Gemini send
// them (Anthropic: message_start, content_block_start, 20 content_block_delta,
// content_block_stop, message_delta with usage, message_stop; Gemini: 20 frames, each with
// its text and the running usageMetadata, the last with finishReason) mapped to chat events,
// each frame already parsed as the adapter gets it. With BENCH_BASELINE_DIR (another built
// checkout) both builds are measured in one process, their runs interleaved, so what a change
// to the mapping buys shows on a busy machine too.
//
//   npm run build && node bench/stream-mapping.mjs
//   BENCH_BASELINE_DIR=../before node bench/stream-mapping.mjs   # before and after
//
// Environment: STREAMS (per run, 50,000), RUNS (7). Prints the median µs per stream of each
// adapter and build.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const STREAMS = Number(process.env.STREAMS ?? 50_000);
const RUNS = Number(process.env.RUNS ?? 7);
const roots = [['this build', join(dirname(fileURLToPath(import.meta.url)), '..')]];
if (process.env.BENCH_BASELINE_DIR) roots.push(['baseline', resolve(process.env.BENCH_BASELINE_DIR)]);

const words = Array.from({ length: 20 }, (_, index) => ` word${index}`);
const anthropicMessages = [
  { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
  ...words.map((text) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } })),
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
].map(({ event, data }) => ({ event, data: JSON.stringify(data), id: undefined }));
const geminiFrames = words.map((text, index) => ({
  candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0, ...(index === words.length - 1 ? { finishReason: 'STOP' } : {}) }],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: index + 1, totalTokenCount: 13 + index },
  modelVersion: 'gemini-2.5-flash',
  responseId: 'resp-bench',
}));

async function adaptersOf(root) {
  const load = (path) => import(pathToFileURL(join(root, 'dist', path)).href);
  const { AnthropicChatFrames } = await load('providers/anthropic/stream-mapping.js');
  const { GeminiStreamMapper } = await load('providers/gemini/stream-mapping.js');
  return {
    anthropic() {
      const frames = new AnthropicChatFrames({ provider: 'anthropic', structuredOutputTool: null, created: 1_700_000_000 });
      const events = [];
      for (const message of anthropicMessages) frames.read(message, events);
      return events.length;
    },
    gemini() {
      const mapper = new GeminiStreamMapper('gemini-2.5-flash', 'gemini');
      let events = 0;
      for (const frame of geminiFrames) events += mapper.map(frame).length;
      return events;
    },
  };
}

function timed(run) {
  let events = 0;
  const started = process.hrtime.bigint();
  for (let index = 0; index < STREAMS; index += 1) events += run();
  if (events === 0) throw new Error('no events');
  return Number(process.hrtime.bigint() - started) / 1000 / STREAMS;
}

const builds = await Promise.all(roots.map(async ([name, root]) => ({ name, adapters: await adaptersOf(root) })));
const figures = new Map();
for (let round = -1; round < RUNS; round += 1) {
  // Round -1 warms every function up; the build that goes first alternates.
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const { name, adapters } of order) {
    for (const [adapter, run] of Object.entries(adapters)) {
      const figure = timed(run);
      if (round < 0) continue;
      const key = `${adapter}, ${name}`;
      figures.set(key, [...(figures.get(key) ?? []), figure]);
    }
  }
}
for (const [key, values] of [...figures].sort(([a], [b]) => a.localeCompare(b))) {
  const sorted = [...values].sort((a, b) => a - b);
  process.stdout.write(`${key.padEnd(24)} median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)} µs per stream (runs ${sorted.map((value) => value.toFixed(2)).join(', ')})\n`);
}
