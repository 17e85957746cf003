import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/*
 * Agents across a whole gateway's life: an http node aimed at loopback through the
 * operator's allowlist (refused before any connection), and a conversation continued after
 * the gateway restarted on the same data dir.
 */

let fake: OpenAIFake;
let listener: Server;
let port = 0;
let connections = 0;
let dataDir: string;

before(async () => {
  fake = await startOpenAIFake();
  listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as AddressInfo).port;
  dataDir = join(mkdtempSync(join(tmpdir(), 'modelgate-agents-gw-')), 'data');
});
after(async () => {
  await fake.close();
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

const start = (tap?: RecordTap) =>
  startTestGateway({
    dataDir,
    env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789', MODELGATE_AGENT_HTTP_ALLOWLIST: `localhost:${port}` },
    ...(tap !== undefined ? { routes: [...ROUTE_MODULES, tap.routes] } : {}),
  });

async function run(url: string, key: string, body: unknown): Promise<{ status: number; body: Loose }> {
  const response = await fetch(`${url}/v1/agents/tutor/runs`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

test('an http node aimed at loopback is refused before connecting; a conversation survives a restart', async () => {
  const tap = new RecordTap();
  let gateway = await start(tap);
  const key = await gateway.createKey({ scopes: ['agents:execute'] });

  const offList = await gateway.admin('PUT', '/admin/v1/agents/probe', { graph: {
    version: 1, name: 'Probe', entry: 'input',
    nodes: [{ id: 'input', type: 'input', next: 'call' }, { id: 'call', type: 'http', config: { url: 'https://metadata.google.internal/computeMetadata/v1/' }, next: 'out' }, { id: 'out', type: 'output', config: { text: '{{call.content}}' } }],
  } });
  assert.equal(offList.status, 400);
  assert.match(offList.body.error.message, /metadata.google.internal is not on the operator's allowlist/);

  const graph = {
    version: 1, name: 'Tutor', entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'route' },
      { id: 'route', type: 'condition', config: { field: 'input', op: 'contains', value: 'fetch' }, branches: { true: 'call', false: 'talk' } },
      { id: 'call', type: 'http', config: { url: `https://localhost:${port}/lookup?q={{input}}` }, next: 'out' },
      { id: 'talk', type: 'llm', config: { model: 'gpt-4o-mini' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: '{{talk.content}}{{call.content}}' } },
    ],
  };
  assert.equal((await gateway.admin('PUT', '/admin/v1/agents/tutor', { graph })).status, 200);
  assert.equal((await gateway.admin('POST', '/admin/v1/agents/tutor/publish', {})).status, 200);

  const refused = await run(gateway.url, key, { input: 'please fetch it' });
  assert.equal(refused.status, 502);
  assert.equal(refused.body.error.code, 'provider_error');
  assert.doesNotMatch(refused.body.error.message, /127\.0\.0\.1|::1|localhost|private/);
  assert.equal(connections, 0);
  const record = await tap.wait(refused.body.error.request_id);
  assert.match(String(record.logDetail?.reason), /(127\.0\.0\.1|::1) is a private, loopback/);

  fake.scriptChat({ kind: 'reply', text: 'first answer', usage: { promptTokens: 2, completionTokens: 2 } });
  const first = await run(gateway.url, key, { input: 'remember 42' });
  assert.equal(first.status, 200);
  // The request log prices a run by the sum of its nodes, the same figure the caller is shown.
  const firstRecord = await tap.wait(first.body.request_id);
  assert.notEqual(first.body.cost.total_usd, null);
  assert.equal(firstRecord.costMicroUsd, Math.round(first.body.cost.total_usd * 1e6));
  await gateway.close();

  gateway = await start();
  fake.server.requests.length = 0;
  const second = await run(gateway.url, key, { input: 'what number?', conversation_id: first.body.conversation_id });
  assert.equal(second.status, 200, JSON.stringify(second.body));
  const messages = (fake.server.requests[0]!.json as Loose).messages;
  assert.deepEqual(messages, [
    { role: 'user', content: 'remember 42' },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'what number?' },
  ]);
  await gateway.close();
});
