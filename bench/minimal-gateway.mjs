// A reference above the lean proxy: the work the budget asks of a gateway, done as directly as
// Node and Fastify allow, and nothing else. Key auth (SHA-256 of the bearer secret, a map
// lookup), a per-key rpm counter, the body parsed and its shape checked, the model resolved,
// the body sent on with the provider's model, the answer parsed and shown with the model the
// caller asked for (streams frame by frame, usage kept), and one row with both payloads in
// modelgate's own SQLite request log (its schema, batches of 100 in a transaction). No
// redaction, metrics, pricing, limits headers or error mapping; JSON bodies only (no media
// handling, so the 1 MiB image chat skips it). What modelgate costs above
// this is the price of its own code, not of the work. Run with `npm run bench -- --minimal`.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { Pool } from 'undici';
import { openStorage } from '../dist/storage/index.js';

const pool = new Pool(process.env.UPSTREAM, { connections: 128, keepAliveTimeout: 60_000 });
const keys = new Map([[createHash('sha256').update(process.env.API_KEY).digest('hex'), { id: 'key_bench', projectId: null, rpm: 1_000_000_000 }]]);
const MODELS = new Map([
  ['gpt-4o-mini', 'gpt-4o-mini'],
  ['text-embedding-3-small', 'text-embedding-3-small'],
]);
const minuteCounts = new Map();

const storage = await openStorage({ dataDir: mkdtempSync(join(tmpdir(), 'minimal-gateway-')) });
const COLUMNS = ['request_id', 'started_at', 'endpoint', 'key_id', 'requested_model', 'resolved_model', 'provider', 'status', 'latency_ms', 'streaming', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'request_payload', 'response_payload'];
const insert = storage.sqlite.prepare(`insert into request_logs (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
const insertBatch = storage.sqlite.transaction((rows) => rows.forEach((row) => insert.run(row)));
// FLUSH_INTERVAL_MS: the instruction harness, whose server answers slowly under valgrind, keeps
// the batches full with a long interval, as it does for modelgate's `logs.flushIntervalMs`.
const flushIntervalMs = Number(process.env.FLUSH_INTERVAL_MS ?? 200);
let queue = [];
let timer;
function flush() {
  clearTimeout(timer);
  timer = undefined;
  insertBatch(queue);
  queue = [];
}
function log(row) {
  queue.push(row);
  if (queue.length >= 100) flush();
  else timer ??= setTimeout(flush, flushIntervalMs);
}

const idPrefix = randomBytes(6).toString('hex');
let sequence = 0;

function refuse(reply, status, message) {
  return reply.code(status).send({ error: { message, type: 'invalid_request_error', param: null, code: null } });
}

const app = Fastify({ keepAliveTimeout: 60_000, bodyLimit: 32 * 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
  try {
    done(null, { text, json: JSON.parse(text) });
  } catch {
    done(Object.assign(new Error('The body is not valid JSON.'), { statusCode: 400 }));
  }
});

app.addHook('onRequest', (request, reply, done) => {
  const authorization = request.headers.authorization ?? '';
  const key = authorization.startsWith('Bearer ') ? keys.get(createHash('sha256').update(authorization.slice(7)).digest('hex')) : undefined;
  if (key === undefined) return refuse(reply, 401, 'Invalid API key.');
  const minute = Math.floor(Date.now() / 60_000);
  const count = minuteCounts.get(key.id);
  if (count === undefined || count.minute !== minute) minuteCounts.set(key.id, { minute, requests: 1 });
  else if (++count.requests > key.rpm) return refuse(reply, 429, 'Rate limit reached.');
  request.key = key;
  done();
});

function call(request, reply, endpoint, valid) {
  const started = Date.now();
  const { text, json: body } = request.body;
  if (typeof body !== 'object' || body === null || !valid(body)) return refuse(reply, 400, 'The body does not have the expected shape.');
  const resolved = MODELS.get(body.model);
  if (resolved === undefined) return refuse(reply, 404, `The model ${body.model} does not exist.`);
  const requestId = `${started.toString(36)}${idPrefix}${(sequence++).toString(36)}`;
  const streaming = body.stream === true;
  const upstreamBody = JSON.stringify({ ...body, model: resolved, ...(streaming ? { stream_options: { include_usage: true } } : {}) });
  const row = (status, usage, responsePayload) => [
    requestId, started, endpoint, request.key.id, body.model, resolved, 'openai', status, Date.now() - started, streaming ? 1 : 0,
    usage?.prompt_tokens ?? null, usage?.completion_tokens ?? null, usage?.total_tokens ?? null, text, responsePayload,
  ];
  const chunks = [];
  let status = 502;
  let pending = '';
  let content = '';
  let usage = null;
  const relayFrames = (chunk) => {
    const frames = (pending + chunk.toString()).split('\n\n');
    pending = frames.pop();
    let out = '';
    for (const frame of frames) {
      const data = frame.slice(6);
      if (data === '[DONE]') {
        out += 'data: [DONE]\n\n';
        continue;
      }
      const parsed = JSON.parse(data);
      parsed.model = body.model;
      usage = parsed.usage ?? usage;
      content += parsed.choices?.[0]?.delta?.content ?? '';
      out += `data: ${JSON.stringify(parsed)}\n\n`;
    }
    if (out.length > 0) reply.raw.write(out);
  };
  reply.hijack();
  pool.dispatch(
    { method: 'POST', path: endpoint, headers: { 'content-type': 'application/json', authorization: 'Bearer upstream-secret' }, body: upstreamBody },
    {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        status = statusCode;
        if (streaming) reply.raw.writeHead(statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': requestId });
      },
      onResponseData(_controller, chunk) {
        if (streaming) relayFrames(chunk);
        else chunks.push(chunk);
      },
      onResponseEnd() {
        if (streaming) {
          reply.raw.end();
          log(row(status, usage, JSON.stringify({ content, usage })));
          return;
        }
        const received = Buffer.concat(chunks).toString();
        const answer = JSON.parse(received);
        // The provider's bytes go on as they came when they already show the caller's model.
        const sent = answer.model === body.model ? received : JSON.stringify({ ...answer, model: body.model });
        reply.raw.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sent), 'x-request-id': requestId });
        reply.raw.end(sent);
        // As modelgate does, an embeddings log row keeps the vectors' count, not the vectors.
        log(row(status, answer.usage, endpoint === '/v1/embeddings' ? JSON.stringify({ vectors: answer.data?.length, usage: answer.usage }) : sent));
      },
      onResponseError() {
        if (!reply.raw.headersSent) reply.raw.writeHead(502);
        reply.raw.end();
        log(row(502, null, null));
      },
    },
  );
}

app.post('/v1/chat/completions', (request, reply) =>
  call(request, reply, '/v1/chat/completions', (body) => typeof body.model === 'string' && Array.isArray(body.messages) && body.messages.length > 0),
);
app.post('/v1/embeddings', (request, reply) =>
  call(request, reply, '/v1/embeddings', (body) => typeof body.model === 'string' && (typeof body.input === 'string' || Array.isArray(body.input))),
);

process.once('SIGTERM', () => app.close().then(() => flush(), () => flush()).finally(() => process.exit(0)));
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`);
