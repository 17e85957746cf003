import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startFakeServer, writeSse, type FakeServer, type RecordedRequest } from './fakes/fake-server.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * A provider whose 200 answers echo the gateway's own credential (the key it was sent): the
 * caller and the stored responses get `[redacted]` in its place, streamed or not.
 */

const PROVIDER_KEY = `sk-proj-${'FAKEfake00'.repeat(4)}`;

const keyOf = (request: RecordedRequest) => String(request.headers.authorization ?? '').replace(/^Bearer /, '');

function sendJson(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** A chat completion (OpenAI API reference, "The chat completion object") and its stream chunks. */
function chatAnswer(request: RecordedRequest, response: ServerResponse): void {
  const text = `You sent me ${keyOf(request)}, thanks.`;
  if (request.json.stream !== true) {
    sendJson(response, {
      id: 'chatcmpl-echo',
      object: 'chat.completion',
      created: 1,
      model: request.json.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    });
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) => JSON.stringify({ id: 'chatcmpl-echo', object: 'chat.completion.chunk', created: 1, model: request.json.model, choices: [{ index: 0, delta, finish_reason: finish }] });
  writeSse(response, chunk({ role: 'assistant', content: text }, null));
  writeSse(response, chunk({}, 'stop'));
  writeSse(response, '[DONE]');
  response.end();
}

/** A Responses API response object (OpenAI API reference, "The response object"). */
function responsesAnswer(request: RecordedRequest, response: ServerResponse): void {
  sendJson(response, {
    id: 'resp_echo',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model: request.json.model,
    output: [{ type: 'message', id: 'msg_echo', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `Key: ${keyOf(request)}`, annotations: [] }] }],
    usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 },
  });
}

describe('a provider answer that echoes the gateway’s own credential', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startFakeServer();
    fake.on('POST /v1/chat/completions', chatAnswer);
    fake.on('POST /v1/responses', responsesAnswer);
    gateway = await startTestGateway({ env: { OPENAI_API_KEY: PROVIDER_KEY, OPENAI_BASE_URL: `${fake.url}/v1` } });
    key = await gateway.createKey();
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('a chat completion reaches the caller with the key redacted', async () => {
    const response = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const text = await response.text();
    assert.equal(response.status, 200);
    assert.equal(keyOf(fake.requests.at(-1)!), PROVIDER_KEY, 'the provider did get the key');
    assert.ok(!text.includes(PROVIDER_KEY), text);
    assert.match(text, /You sent me \[redacted\], thanks\./);
  });

  test('a streamed chat completion too', async () => {
    const response = await post('/v1/chat/completions', { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const text = await response.text();
    assert.equal(response.status, 200);
    assert.ok(!text.includes(PROVIDER_KEY), text);
    assert.match(text, /\[redacted\]/);
  });

  test('a Responses answer is returned and stored (stored_responses) without the key', async () => {
    const response = await post('/v1/responses', { model: 'gpt-4o-mini', input: 'hi' });
    const text = await response.text();
    assert.equal(response.status, 200);
    assert.ok(!text.includes(PROVIDER_KEY), text);
    const rows = await gateway.gateway.storage.db.selectFrom('stored_responses').selectAll().execute();
    assert.ok(rows.length > 0, 'the response was stored');
    const stored = JSON.stringify(rows);
    assert.ok(!stored.includes(PROVIDER_KEY), 'stored_responses holds the key');
    assert.match(stored, /\[redacted\]/);
  });
});
