// Microbenchmark: the CPU one request spends on metrics, hand-written registry against
// prom-client doing the same work (docs/decisions/0014-libraries-for-metrics-and-signing.md).
// A chat request observes its count and duration (route, model, status), the upstream
// duration (provider, model), prompt and completion tokens and its cost. prom-client is
// used the way its documentation recommends for a hot path: label-bound children, made once.
//
//   npm run build && node bench/metrics-registry.mjs [requests per round, default 2e6]
import { GatewayMetrics } from '../dist/metrics/index.js';
import client from 'prom-client';

const REQUESTS = Number(process.argv[2] ?? 2e6);
const ROUNDS = 7;
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const MODELS = ['gpt-4o-mini', 'claude-haiku-4-5', 'gemini-2.5-flash'];

function handWritten() {
  const metrics = new GatewayMetrics();
  return {
    observe(i) {
      const model = MODELS[i % 3];
      metrics.observeRequest({ route: '/v1/chat/completions', model, status: 200, seconds: 0.0123 });
      metrics.observeUpstream({ provider: 'openai', model, seconds: 0.0101 });
      metrics.countTokens(model, 11, 7, 0);
      metrics.addCost(model, 6);
    },
    render: () => metrics.render(),
  };
}

function promClient() {
  const registry = new client.Registry();
  const requests = new client.Counter({ name: 'modelgate_requests_total', help: 'h', labelNames: ['route', 'model', 'status'], registers: [registry] });
  const duration = new client.Histogram({ name: 'modelgate_request_duration_seconds', help: 'h', labelNames: ['route', 'model', 'status'], buckets: BUCKETS, registers: [registry] });
  const upstream = new client.Histogram({ name: 'modelgate_upstream_duration_seconds', help: 'h', labelNames: ['provider', 'model'], buckets: BUCKETS, registers: [registry] });
  const tokens = new client.Counter({ name: 'modelgate_tokens_total', help: 'h', labelNames: ['model', 'kind'], registers: [registry] });
  const cost = new client.Counter({ name: 'modelgate_cost_usd_total', help: 'h', labelNames: ['model'], registers: [registry] });
  // Children made once per label set and kept, as GatewayMetrics keeps its series.
  const children = new Map();
  const childrenOf = (model) => {
    let entry = children.get(model);
    if (entry === undefined) {
      entry = {
        count: requests.labels('/v1/chat/completions', model, '200'),
        duration: duration.labels('/v1/chat/completions', model, '200'),
        upstream: upstream.labels('openai', model),
        prompt: tokens.labels(model, 'prompt'),
        completion: tokens.labels(model, 'completion'),
        cost: cost.labels(model),
      };
      children.set(model, entry);
    }
    return entry;
  };
  return {
    observe(i) {
      const series = childrenOf(MODELS[i % 3]);
      series.count.inc();
      series.duration.observe(0.0123);
      series.upstream.observe(0.0101);
      series.prompt.inc(11);
      series.completion.inc(7);
      series.cost.inc(6 / 1e6);
    },
    render: () => registry.metrics(),
  };
}

function nsPerRequest(target) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i += 1) target.observe(i);
  return Number(process.hrtime.bigint() - start) / REQUESTS;
}

async function renderMs(target) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < 200; i += 1) await target.render();
  return Number(process.hrtime.bigint() - start) / 200 / 1e6;
}

const targets = { 'hand-written': handWritten(), 'prom-client': promClient() };
const results = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  // Alternating, so drift of a shared machine falls on both.
  for (const [name, target] of Object.entries(targets)) results[name].push(nsPerRequest(target));
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, target] of Object.entries(targets)) {
  console.log(`${name.padEnd(13)} ${median(results[name]).toFixed(0).padStart(5)} ns per request (median of ${ROUNDS} rounds; ${results[name].map((v) => v.toFixed(0)).join(' ')})  render ${(await renderMs(target)).toFixed(3)} ms`);
}
