// Microbenchmark: the CPU the tracing adds to one model request when a collector is
// configured (docs/observability.md): the request span, one attempt span with its
// traceparent, both ended with the record's attributes. Spans go to a batching exporter
// whose collector is not listening (export failures happen off this path, as in production).
//
//   npm run build && node bench/tracing-cost.mjs [requests per round, default 200000]
import { startTracing } from '../dist/telemetry/index.js';

const REQUESTS = Number(process.argv[2] ?? 2e5);
const ROUNDS = 5;
const tracing = await startTracing({ otlpEndpoint: 'http://127.0.0.1:9', serviceName: 'bench', serviceVersion: '0' });
const headers = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'content-type': 'application/json' };
const upstreamHeaders = { authorization: 'Bearer sk-bench', 'content-type': 'application/json' };

function round(offset) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i += 1) {
    const record = {
      requestId: `req_${offset + i}`,
      endpoint: '/v1/chat/completions',
      mode: 'chat',
      requestedModel: 'gpt-4o-mini',
      resolvedModel: 'gpt-4o-mini',
      provider: 'openai',
      usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18, cachedPromptTokens: null },
      errorCode: null,
    };
    tracing.startRequest(record, 'POST', headers);
    const attempt = tracing.startAttempt({ requestId: record.requestId, provider: 'openai', url: 'https://api.openai.com/v1/chat/completions', method: 'POST', headers: upstreamHeaders });
    attempt.end(200);
    tracing.endRequest(record, 200, 6);
  }
  return Number(process.hrtime.bigint() - start) / REQUESTS;
}

const results = [];
for (let r = 0; r < ROUNDS; r += 1) results.push(round(r * REQUESTS));
const median = [...results].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
console.log(`tracing: ${median.toFixed(0)} ns per request (median of ${ROUNDS} rounds; ${results.map((v) => v.toFixed(0)).join(' ')})`);
await tracing.shutdown().catch(() => undefined);
