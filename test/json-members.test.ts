import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { passThroughJson, patchJsonObject } from '../src/providers/shared/json-members.js';
import { startFakeServer, writeSse, type FakeServer } from './fakes/fake-server.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * Pass-through bodies: the caller's JSON goes upstream as written, with only the gateway's
 * own members rewritten (model, stream, provider), and streamed answers hand their upstream
 * connection back to the pool.
 */

const patch = (source: string, set: Record<string, unknown>, remove: string[] = ['model', 'stream', 'provider']) =>
  patchJsonObject(Buffer.from(source), set, remove).toString('utf8');

describe('patchJsonObject', () => {
  test('keeps every other member byte for byte and puts the set members first', () => {
    const source = ' { "model" : "alias", "messages" : [ {"role":"user","content":"a \\"quoted\\" {[ brace ]} \\\\ é \\u00e9"} ] ,"n":2, "x":null } ';
    assert.equal(
      patch(source, { model: 'upstream-id' }),
      '{"model":"upstream-id","messages" : [ {"role":"user","content":"a \\"quoted\\" {[ brace ]} \\\\ é \\u00e9"} ],"n":2,"x":null}',
    );
  });

  test('removes the gateway members, also when their key is written with escapes', () => {
    assert.equal(patch('{"stream":true,"provider":"openai","s\\u0074ream":false,"temperature":0.2}', { model: 'm' }), '{"model":"m","temperature":0.2}');
  });

  test('a repeated key keeps only its last value, the one JSON.parse saw', () => {
    const source = '{"temperature":5,"messages":[],"temperature":0.5}';
    const patched = patch(source, { model: 'm' });
    assert.equal(patched, '{"model":"m","messages":[],"temperature":0.5}');
    assert.deepEqual(JSON.parse(patched), { ...JSON.parse(source), model: 'm' });
  });

  test('replaces a member the caller also sent, and handles an empty object', () => {
    assert.equal(patch('{"stream_options":{"include_usage":false}}', { stream: true, stream_options: { include_usage: true } }), '{"stream":true,"stream_options":{"include_usage":true}}');
    assert.equal(patch('{}', { model: 'm' }), '{"model":"m"}');
    assert.equal(patch('{"a":1}', {}, []), '{"a":1}');
  });
});

describe('passThroughJson of a small body', () => {
  test('the adapter\'s members on top of the body\'s, in one object', () => {
    const body = { messages: [{ role: 'user', content: 'Hi' }], stream_options: { include_usage: false }, temperature: 0.2 };
    const json = passThroughJson({ body }, { model: 'm', stream_options: { include_usage: true } }).toString('utf8');
    assert.deepEqual(JSON.parse(json), { ...body, model: 'm', stream_options: { include_usage: true } });
  });

  test('a member named __proto__ (a body built from parsed JSON) is kept as a member, never made the prototype', () => {
    const body = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const json = passThroughJson({ body }, { model: 'm' }).toString('utf8');
    assert.equal(json, '{"__proto__":{"polluted":true},"a":1,"model":"m"}');
  });
});

describe('passThroughJson of a body with a large member', () => {
  test('sends that member from the caller\'s own bytes, the small parts joined around it', () => {
    const image = `data:image/png;base64,${Buffer.alloc(120_000, 7).toString('base64')}`;
    const messages = `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"${image}"}}]}]`;
    const source = Buffer.from(`{"model":"alias","messages":${messages},"temperature":0.25,"stream":true}`);
    const bytes = passThroughJson({ body: JSON.parse(source.toString('utf8')) as Record<string, unknown>, sourceJson: source }, { model: 'm', stream: true });
    assert.ok(Array.isArray(bytes), 'a body with a large member goes as pieces');
    assert.deepEqual(
      bytes.map((piece) => piece.toString('utf8')),
      ['{"model":"m","stream":true,', `"messages":${messages}`, ',"temperature":0.25}'],
    );
    assert.equal(bytes[1]!.buffer, source.buffer, 'the large member is a view of the caller\'s bytes, not a copy');
  });
});

describe('pass-through through the gateway', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' } });
    key = await gateway.createKey({ scopes: ['model:request'] });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const post = (body: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });

  test('a large body reaches the provider as the caller wrote it, with only model, stream and provider rewritten', async () => {
    const image = `data:image/png;base64,${Buffer.alloc(30_000, 7).toString('base64')}`;
    const messages = `[ { "role" : "user", "content" : [ {"type":"text","text":"Qu'est-ce que c'est ? \\u00e9 é"}, {"type":"image_url","image_url":{"url":"${image}"}} ] } ]`;
    const body = `{"provider":"openai", "model":"gpt4o-mini", "stream":false, "messages" : ${messages}, "temperature" : 2, "temperature":0.25, "a_field_from_the_future": {"nested":[1,2,3]}}`;
    const response = await post(body);
    assert.equal(response.status, 200);
    const received = fake.server.requests.at(-1)!.rawBody.toString('utf8');
    assert.equal(received, `{"model":"gpt-4o-mini","messages" : ${messages},"temperature":0.25,"a_field_from_the_future": {"nested":[1,2,3]}}`);
  });

  test('a body with a member too large to copy reaches the provider whole, with its length', async () => {
    const image = `data:image/png;base64,${Buffer.alloc(300_000, 9).toString('base64')}`;
    const messages = `[{"role":"user","content":[{"type":"text","text":"What is it?"},{"type":"image_url","image_url":{"url":"${image}"}}]}]`;
    for (const stream of [false, true]) {
      const response = await post(`{"model":"gpt-4o-mini","stream":${stream},"messages":${messages},"max_tokens":5}`);
      assert.equal(response.status, 200);
      await response.text();
      const received = fake.server.requests.at(-1)!;
      const expected = stream
        ? `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":${messages},"max_tokens":5}`
        : `{"model":"gpt-4o-mini","messages":${messages},"max_tokens":5}`;
      assert.equal(received.rawBody.toString('utf8'), expected);
      assert.equal(received.headers['content-length'], String(Buffer.byteLength(expected)));
      assert.equal(received.headers['transfer-encoding'], undefined);
    }
  });

  test('a small body is serialised again, with the same members', async () => {
    const response = await post('{"model":"gpt-4o-mini","stream":false,"messages":[{"role":"user","content":"hi"}],"provider":"openai"}');
    assert.equal(response.status, 200);
    assert.deepEqual(fake.server.requests.at(-1)!.json, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  });
});

describe('streamed answers and the upstream connection', () => {
  let upstream: FakeServer;
  let gateway: TestGateway;
  let key: string;
  const ports: number[] = [];

  before(async () => {
    upstream = await startFakeServer();
    // OpenAI's stream format: chat.completion.chunk frames, a usage chunk (choices: []), then [DONE].
    upstream.on('POST /v1/chat/completions', (_request, response) => {
      ports.push(response.socket!.remotePort!);
      const chunk = (choices: unknown[], usage?: unknown) =>
        JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices, ...(usage ? { usage } : {}) });
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      writeSse(response, chunk([{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }]));
      writeSse(response, chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
      writeSse(response, chunk([], { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }));
      writeSse(response, '[DONE]');
      response.end();
    });
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' } });
    key = await gateway.createKey({ scopes: ['model:request'] });
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  test('one stream after another uses one upstream connection', async () => {
    for (let round = 0; round < 3; round += 1) {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const text = await response.text();
      assert.ok(text.endsWith('data: [DONE]\n\n'), text);
    }
    assert.equal(ports.length, 3);
    assert.equal(new Set(ports).size, 1, `connections used: ${ports.join(', ')}`);
  });
});
