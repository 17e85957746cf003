// A minimal, fast fake OpenAI upstream for the benchmark: plain node:http, fixed bodies.
// POST /v1/chat/completions (JSON, or SSE when "stream": true), POST /v1/embeddings, and
// POST /v1/responses streamed (the Responses API's events for the same answer).
// A stream sends its first frame at once and the rest STREAM_GAP_MS (default 2) later, like a
// model that takes a moment after its first token: a proxy that buffers shows it in its
// time to first byte. A request whose message asks for "one word per event" is answered as
// providers stream tokens: 22 chunks (the role, 20 words, the finish reason), then the usage
// chunk when asked for and [DONE], each its own write, TOKEN_GAP_MS (default 1) apart, so
// each reaches the proxy as its own network chunk. With HOLD_STREAMS=1 streams send one frame
// and then stay open (for the open-streams memory measurement) until the client goes away.
// Under /overloaded/ every request gets OpenAI's 503 "overloaded" error: a deployment that is
// down, for the fallback scenario.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 0);
const holdStreams = process.env.HOLD_STREAMS === '1';
const streamGapMs = Number(process.env.STREAM_GAP_MS ?? 2);
const tokenGapMs = Number(process.env.TOKEN_GAP_MS ?? 1);
const created = Math.floor(Date.now() / 1000);

const completion = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
});
const chunk = (delta, finish) => `data: ${JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_bench',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})}\n\n`;
const words = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'];
const streamFrames = [chunk({ role: 'assistant', content: '' }, null), ...words.map((word) => chunk({ content: word }, null)), chunk({}, 'stop')];
const usageFrameOf = (tokens) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 12, completion_tokens: tokens, total_tokens: 12 + tokens } })}\n\n`;
const usageFrame = usageFrameOf(words.length);
const tokenWords = ['One', ' two', ' three', ' four', ' five', ' six', ' seven', ' eight', ' nine', ' ten', ' eleven', ' twelve', ' thirteen', ' fourteen', ' fifteen', ' sixteen', ' seventeen', ' eighteen', ' nineteen', ' twenty.'];
const tokenFrames = [chunk({ role: 'assistant', content: '' }, null), ...tokenWords.map((word) => chunk({ content: word }, null)), chunk({}, 'stop')];
const tokenUsageFrame = usageFrameOf(tokenWords.length);

/** Writes `frames` one by one, `tokenGapMs` apart, then ends the response. */
function writeApart(res, frames) {
  let next = 0;
  const write = () => {
    if (res.destroyed) return;
    if (next === frames.length - 1) return res.end(frames[next]);
    res.write(frames[next++]);
    setTimeout(write, tokenGapMs);
  };
  write();
}
// The Responses API's stream of the same nine words, as OpenAI sends it (event: lines, sequence numbers).
const responseObject = (status, output, usage) => ({
  id: 'resp_bench', object: 'response', created_at: created, status, model: 'gpt-4o-mini-2024-07-18', output, usage, store: false, metadata: {},
});
const message = { id: 'msg_bench', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: words.join('') }] };
const responseEvents = [
  ['response.created', { response: responseObject('in_progress', [], null) }],
  ['response.in_progress', { response: responseObject('in_progress', [], null) }],
  ['response.output_item.added', { item: { ...message, status: 'in_progress', content: [] }, output_index: 0 }],
  ['response.content_part.added', { content_index: 0, item_id: 'msg_bench', output_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } }],
  ...words.map((delta) => ['response.output_text.delta', { content_index: 0, delta, item_id: 'msg_bench', logprobs: [], output_index: 0 }]),
  ['response.output_text.done', { content_index: 0, item_id: 'msg_bench', logprobs: [], output_index: 0, text: words.join('') }],
  ['response.content_part.done', { content_index: 0, item_id: 'msg_bench', output_index: 0, part: message.content[0] }],
  ['response.output_item.done', { item: message, output_index: 0 }],
  ['response.completed', { response: responseObject('completed', [message], { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 21 }) }],
].map(([type, members], sequence) => `event: ${type}\ndata: ${JSON.stringify({ type, ...members, sequence_number: sequence })}\n\n`);
const embedding = JSON.stringify({
  object: 'list', model: 'text-embedding-3-small',
  data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 256 }, (_, i) => Math.sin(i) / 10) }],
  usage: { prompt_tokens: 8, total_tokens: 8 },
});

const overloaded = JSON.stringify({
  error: { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: null },
});

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url.startsWith('/overloaded/')) {
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(overloaded) });
      res.end(overloaded);
      return;
    }
    if (req.url === '/v1/embeddings') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(embedding) });
      res.end(embedding);
      return;
    }
    const body = Buffer.concat(chunks);
    // No parsing: the same for every target (JSON.stringify writes no spaces).
    const streaming = body.includes('"stream":true');
    if (!streaming) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      res.end(completion);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (body.includes('one word per event') && !holdStreams) {
      writeApart(res, [...tokenFrames, ...(body.includes('"include_usage":true') ? [tokenUsageFrame] : []), 'data: [DONE]\n\n']);
      return;
    }
    const frames = req.url === '/v1/responses' ? responseEvents : streamFrames;
    res.write(frames[0]);
    if (holdStreams) return; // held open until the client disconnects
    const end = req.url === '/v1/responses' ? '' : (body.includes('"include_usage":true') ? usageFrame : '') + 'data: [DONE]\n\n';
    const rest = frames.slice(1).join('') + end;
    setTimeout(() => res.end(rest), streamGapMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
