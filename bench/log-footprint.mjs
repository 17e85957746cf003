// Bytes the request log takes per request, on SQLite or PostgreSQL: writes records of the
// benchmark's mixed load (chat, streamed chat, embeddings, a refused unknown key) through the
// gateway's own row builder and store, then measures the database.
//
//   npm run build && node bench/log-footprint.mjs [--records 100000] [--database-url postgres://…] [--dist DIR] [--no-payloads] [--kind chat]
//
// --dist measures another build (the code before a change: its dist/ folder). SQLite: the
// data dir's files after a WAL checkpoint. PostgreSQL (a fresh database made and dropped
// here): pg_total_relation_size of request_logs, indexes and TOAST included. --kind chat writes
// only the small chat (the budget's "stored bytes per small chat record"), not the mix.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { createDatabase } from './lib/targets.mjs';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    'database-url': { type: 'string' },
    dist: { type: 'string', default: 'dist' },
    'no-payloads': { type: 'boolean', default: false },
    kind: { type: 'string', default: 'mixed' },
  },
});
const records = Number(values.records);
const dist = resolve(values.dist);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { toLogRow, LogStore } = await load('logs/index.js');
const { openStorage } = await load('storage/index.js');

const created = Math.floor(Date.now() / 1000);
const MESSAGES = [{ role: 'user', content: 'Hello, who are you?' }];
const USAGE = { promptTokens: 12, completionTokens: 9, totalTokens: 21, cachedPromptTokens: null };
const COMPLETION = {
  id: 'chatcmpl-bench', object: 'chat.completion', created, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
};
const ALL_KINDS = [
  { endpoint: '/v1/chat/completions', mode: 'chat', streaming: false, request: { stream: false, model: 'gpt-4o-mini', messages: MESSAGES }, response: COMPLETION, usage: USAGE, status: 200 },
  {
    endpoint: '/v1/chat/completions', mode: 'chat', streaming: true, request: { stream: true, model: 'gpt-4o-mini', messages: MESSAGES },
    response: { object: 'chat.completion.stream', choices: [{ index: 0, content: 'Hello! How can I help you today?', finish_reason: 'stop' }], usage: USAGE, complete: true }, usage: USAGE, status: 200,
  },
  {
    endpoint: '/v1/embeddings', mode: 'embedding', streaming: false, request: { model: 'text-embedding-3-small', input: 'The quick brown fox jumps over the lazy dog' },
    response: { object: 'list', embeddings: 1, dimensions: 256, model: 'text-embedding-3-small', usage: { prompt_tokens: 8, total_tokens: 8 } },
    usage: { promptTokens: 8, completionTokens: 0, totalTokens: 8, cachedPromptTokens: null }, status: 200,
  },
];
if (values.kind !== 'mixed' && values.kind !== 'chat') throw new Error('--kind is mixed or chat');
const KINDS = values.kind === 'chat' ? ALL_KINDS.slice(0, 1) : ALL_KINDS;

let sequence = 0;
function requestId(now) {
  sequence += 1;
  return `req_${now.toString(16).padStart(12, '0')}${sequence.toString(16).padStart(20, '0')}`;
}

function rowOf(index, now) {
  const kind = KINDS[index % KINDS.length];
  const record = {
    requestId: requestId(now), startedAt: now, endpoint: kind.endpoint, platform: null, mode: kind.mode, requestedModel: kind.request.model,
    resolvedModel: kind.request.model, provider: 'openai', streaming: kind.streaming, usage: kind.usage, imageCount: null, audioSeconds: null,
    media: null, requestPayload: kind.request, responsePayload: kind.response, logDetail: null, errorCode: null, upstreamLatencyMs: 3,
    droppedFields: [], agent: null, admission: null, extra: null,
  };
  const caller = { keyId: 'key_26eb466588167886', projectId: 'default', fingerprint: 'key_26eb466588167886…a1b2' };
  return toLogRow({ record, caller, status: kind.status, latencyMs: 5, cost: { microUsd: 12, startingPrice: false } }, { payloads: !values['no-payloads'], maxPayloadBytes: 262_144 });
}

const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-footprint-'));
const postgres = values['database-url'] === undefined ? undefined : await createDatabase(values['database-url']);
const storage = await openStorage({ databaseUrl: postgres?.url, dataDir });
const store = new LogStore(storage);
const start = Date.now() - records;
const cpuBefore = process.cpuUsage();
for (let index = 0; index < records; index += 100) {
  const batch = [];
  for (let row = index; row < Math.min(records, index + 100); row += 1) batch.push(rowOf(row, start + row));
  await store.insertBatch(batch);
}
const cpu = process.cpuUsage(cpuBefore);
let bytes;
if (storage.sqlite !== undefined) {
  storage.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  bytes = readdirSync(dataDir).reduce((sum, file) => sum + statSync(join(dataDir, file)).size, 0);
} else {
  await storage.pg.query('vacuum analyze request_logs');
  bytes = Number((await storage.pg.query(`select pg_total_relation_size('request_logs') as bytes`)).rows[0].bytes);
}
await storage.close();
await postgres?.drop();
rmSync(dataDir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    database: storage.kind,
    dist,
    payloads: !values['no-payloads'],
    kind: values.kind,
    records,
    bytes,
    bytesPerRecord: Math.round(bytes / records),
    cpuMicrosecondsPerRecord: Math.round((cpu.user + cpu.system) / records),
  })}\n`,
);
