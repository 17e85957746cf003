import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import pino from 'pino';
import type { RouteModule } from '../src/server/app.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/** Test-only routes: one that fails unexpectedly, one with a strict schema. */
const faultyRoutes: RouteModule = (app) => {
  app.post('/test/explode', { schema: { hide: true } }, async () => {
    throw new Error('database password=hunter2 exploded at /srv/app/src/secret.ts:12');
  });
  app.post(
    '/test/strict',
    { schema: { hide: true, body: Type.Object({ name: Type.String(), count: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }) } },
    async () => ({ ok: true }),
  );
};

describe('framework errors get the documented error body', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway({ routes: [faultyRoutes], configFile: { server: { bodyLimitBytes: 1024 * 1024 } } });
  });
  after(() => gateway.close());

  async function post(path: string, body: string | Buffer, contentType = 'application/json') {
    const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
    const json = (await response.json()) as { error: { message: string; type: string; code: string; param: string | null; request_id: string } };
    assert.equal(json.error.request_id, response.headers.get('x-request-id'));
    return { status: response.status, error: json.error };
  }

  test('malformed JSON is a 400 invalid_body', async () => {
    const { status, error } = await post('/test/strict', '{"name": ');
    assert.equal(status, 400);
    assert.equal(error.code, 'invalid_body');
    assert.match(error.message, /not valid JSON/);
  });

  test('a body that is not an object says to send a JSON object', async () => {
    const { status, error } = await post('/test/strict', '[1, 2]');
    assert.equal(status, 400);
    assert.equal(error.message, 'The request body must be a JSON object.');
  });

  test('schema errors name the field', async () => {
    const missing = await post('/test/strict', JSON.stringify({ count: 1 }));
    assert.equal(missing.status, 400);
    assert.match(missing.error.message, /body\.name is required/);
    assert.equal(missing.error.param, 'name');
    const wrongType = await post('/test/strict', JSON.stringify({ name: 'x', count: 'many' }));
    assert.match(wrongType.error.message, /body\.count must be integer/);
    const unknown = await post('/test/strict', JSON.stringify({ name: 'x', count: 1, colour: 'red' }));
    assert.match(unknown.error.message, /body\.colour is not a recognised field/);
  });

  test('a __proto__ key is refused, not merged', async () => {
    const { status, error } = await post('/test/strict', '{"name":"x","count":1,"__proto__":{"admin":true}}');
    assert.equal(status, 400);
    assert.equal(error.code, 'invalid_body');
  });

  test('a non-JSON content type is a 415', async () => {
    const { status, error } = await post('/test/strict', 'name=x', 'application/x-www-form-urlencoded');
    assert.equal(status, 415);
    assert.equal(error.code, 'unsupported_media_type');
    const text = await post('/test/strict', 'hello', 'text/plain');
    assert.equal(text.status, 415);
  });

  test('a compressed body is a 415 that says to send it uncompressed, not "not valid JSON"', async () => {
    const response = await fetch(`${gateway.url}/test/strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ name: 'x', count: 1 })),
    });
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(response.status, 415);
    assert.equal(error.code, 'unsupported_media_type');
    assert.match(error.message, /Content-Encoding: gzip, which the gateway does not decode\. Send it uncompressed/);
    // Without the header, bytes that are not JSON are invalid JSON as before.
    const identity = await post('/test/strict', '{"name": ');
    assert.equal(identity.error.code, 'invalid_body');
  });

  test('an oversized body is a 413 naming the limit', async () => {
    const { status, error } = await post('/test/strict', JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), count: 1 }));
    assert.equal(status, 413);
    assert.equal(error.code, 'request_too_large');
    assert.match(error.message, /1 MiB/);
  });

  test('an oversized body sent in chunks, without a Content-Length, is a 413 too', async () => {
    const body = Buffer.from(JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024), count: 1 }));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < body.length; offset += 256 * 1024) controller.enqueue(body.subarray(offset, offset + 256 * 1024));
        controller.close();
      },
    });
    const response = await fetch(`${gateway.url}/test/strict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(response.status, 413);
    assert.equal(error.code, 'request_too_large');
    assert.match(error.message, /1 MiB/);
  });

  test('an unexpected failure is a 500 internal_error without internals', async () => {
    const { status, error } = await post('/test/explode', '{}');
    assert.equal(status, 500);
    assert.equal(error.code, 'internal_error');
    assert.equal(error.type, 'api_error');
    assert.doesNotMatch(error.message, /hunter2|secret\.ts|exploded/);
  });
});

/** Sends `payload` on a fresh connection (optionally the rest after a pause) and reads until the gateway closes it. */
function rawExchange(url: string, payload: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(payload));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

describe('requests the HTTP parser refuses get the documented error body too', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway({ configFile: { server: { requestTimeoutMs: 2_000 } } });
  });
  after(() => gateway.close());

  async function refused(payload: string) {
    const answer = await rawExchange(gateway.url, payload);
    const { error } = JSON.parse(answer.body) as { error: { message: string; type: string; code: string; request_id: string } };
    assert.match(answer.headers['x-request-id'] ?? '', /^req_[0-9a-f]{32}$/);
    assert.equal(error.request_id, answer.headers['x-request-id']);
    assert.equal(answer.headers.connection, 'close');
    // The same request fails the same way again: the SDKs must not resend it.
    assert.equal(answer.headers['x-should-retry'], 'false');
    return { status: answer.status, error };
  }

  test('headers over the limit: 413 request_too_large naming it', async () => {
    const { status, error } = await refused(`GET /v1/models HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.equal(status, 413);
    assert.equal(error.code, 'request_too_large');
    assert.match(error.message, /headers are over 16384 bytes/);
  });

  test('malformed HTTP: 400 invalid_body saying what is wrong', async () => {
    const cases: [string, RegExp][] = [
      ['GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Note: a\u0001b\r\n\r\n', /a header name or value holds a character HTTP does not allow/],
      ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n', /Content-Length header is not a whole number/],
      ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', /more than one Content-Length header; send exactly one/],
      ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /both Content-Length and Transfer-Encoding/],
      ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n0\r\n\r\n', /both Content-Length and Transfer-Encoding/],
      ['FETCH! / HTTP/1.1\r\n\r\n', /not valid HTTP\/1\.1/],
    ];
    for (const [payload, message] of cases) {
      const { status, error } = await refused(payload);
      assert.equal(status, 400, payload);
      assert.deepEqual([error.type, error.code], ['invalid_request_error', 'invalid_body']);
      assert.match(error.message, message);
    }
  });

  test('paths the router refuses: 400 invalid_body with x-request-id, not the framework\'s shape', async () => {
    const cases: [string, RegExp][] = [
      ['/v1/%zz', /percent-escape that does not decode/],
      ['/admin/v1/keys/%E0%A4%A', /percent-escape that does not decode/],
      [`/admin/v1/keys/${'k'.repeat(101)}`, /over 100 characters/],
    ];
    for (const [path, message] of cases) {
      const response = await fetch(`${gateway.url}${path}`);
      const { error } = (await response.json()) as { error: { code: string; message: string; request_id: string } };
      assert.equal(response.status, 400, path);
      assert.equal(error.code, 'invalid_body');
      assert.match(error.message, message);
      assert.equal(error.request_id, response.headers.get('x-request-id'));
      assert.equal(response.headers.get('x-should-retry'), 'false');
    }
  });

  test('a request that stops arriving is answered and its connection closed after server.requestTimeoutMs', async () => {
    const key = await gateway.createKey({ scopes: ['model:request'] });
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const { status, error } = await refused(`${head}{"model":`);
    assert.equal(status, 400);
    assert.equal(error.code, 'invalid_body');
    assert.match(error.message, /did not arrive in time: its headers must arrive within 2 s and all of it within 2 s/);
  });
});

describe('a client that closes its connection mid-upload', () => {
  test('is logged 499 from when it started, and is no error of the gateway in the process log', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const gateway = await startTestGateway({ logger });
    try {
      const key = await gateway.createKey({ scopes: ['model:request'] });
      const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      const sentAt = Date.now();
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":"gpt-4o-mini",`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const abortedAt = Date.now();
      socket.destroy();
      let record: { created_at: string; status: number; error_code: string; latency_ms: number } | undefined;
      for (let attempt = 0; attempt < 200 && record === undefined; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        await gateway.gateway.context.logs.writer.flush();
        record = (await gateway.admin('GET', '/admin/v1/logs?limit=1')).body.data[0];
      }
      assert.ok(record !== undefined, 'the request was logged');
      assert.deepEqual([record.status, record.error_code], [499, 'client_closed']);
      const started = Date.parse(record.created_at);
      assert.ok(started >= sentAt - 1000 && started < abortedAt, `started ${record.created_at}, before the abort at ${new Date(abortedAt).toISOString()}`);
      const errors = lines.filter((line) => Number(line.level) >= 50);
      assert.deepEqual(errors, [], 'nothing at error level');
    } finally {
      await gateway.close();
    }
  });
});

describe('a request that arrives during a graceful shutdown', () => {
  test('is refused with a documented 503 shutting_down and its connection closed, after the request in flight is answered', async () => {
    let entered!: () => void;
    const inFlight = new Promise<void>((done) => (entered = done));
    let release!: () => void;
    const released = new Promise<void>((done) => (release = done));
    const holdingRoute: RouteModule = (app) => {
      app.get('/test/hold', { schema: { hide: true } }, async () => {
        entered();
        await released;
        return { held: true };
      });
    };
    const gateway = await startTestGateway({ routes: [holdingRoute] });
    const { hostname, port } = new URL(gateway.url);
    const socket = connect(Number(port), hostname);
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.write('GET /test/hold HTTP/1.1\r\nHost: x\r\n\r\n');
    await inFlight;

    const shutdown = gateway.close();
    await new Promise((done) => setTimeout(done, 100));
    // The same kept-alive connection, busy with the first request, so nothing closes it before this one is read.
    socket.write('GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((done) => setTimeout(done, 100));
    release();
    await closed;
    await shutdown;

    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    assert.match(first ?? '', /^HTTP\/1\.1 200 [\s\S]*\{"held":true\}$/);
    assert.match(second ?? '', /^HTTP\/1\.1 503 /);
    assert.match(second ?? '', /\r\nconnection: close\r\n/i);
    const requestId = /\r\nx-request-id: (\S+)\r\n/i.exec(second ?? '')?.[1];
    const { error } = JSON.parse((second ?? '').split('\r\n\r\n')[1]!) as { error: { type: string; code: string; message: string; request_id: string } };
    assert.deepEqual([error.type, error.code, error.request_id], ['api_error', 'shutting_down', requestId]);
    assert.match(error.message, /shutting down\. Send the request again/);
  });
});
