import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { GatewayError } from '../src/errors/index.js';
import { whenAborted } from '../src/providers/shared/abort-listeners.js';
import { sendUpstreamBuffered } from '../src/providers/shared/upstream-http.js';

/*
 * Whole-response upstream calls and their cancellation. A call's signal is usually the client
 * connection's, shared by every call that connection makes in turn, so a call that ended must
 * stop listening to it, and an abort must reach the call that is still running.
 */

describe('whenAborted', () => {
  test('calls what is registered when the signal aborts, once, and not what was removed', () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const stopFirst = whenAborted(controller.signal, () => calls.push('first'));
    whenAborted(controller.signal, () => calls.push('second'));
    stopFirst();
    controller.abort();
    controller.abort();
    assert.deepEqual(calls, ['second']);
  });

  test('signals do not share callbacks', () => {
    const one = new AbortController();
    const other = new AbortController();
    const calls: string[] = [];
    whenAborted(one.signal, () => calls.push('one'));
    whenAborted(other.signal, () => calls.push('other'));
    other.abort();
    assert.deepEqual(calls, ['other']);
  });
});

describe('sendUpstreamBuffered', () => {
  test('an abort of a shared signal cancels the running call upstream, after earlier calls on it ended', async (t) => {
    const held: ServerResponse[] = [];
    const upstreamClosed: Promise<unknown>[] = [];
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      request.resume();
      if (request.url === '/hold') {
        held.push(response);
        upstreamClosed.push(once(response, 'close'));
        response.writeHead(200, { 'content-type': 'application/json' }); // headers, then nothing
        response.flushHeaders();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dispatcher = new Agent();
    t.after(async () => {
      for (const response of held) response.destroy();
      await dispatcher.close();
      server.close();
    });
    const http = { dispatcher, timeoutMs: 10_000, streamIdleTimeoutMs: 10_000 };
    const connection = new AbortController();
    const call = (path: string) => sendUpstreamBuffered(http, { url: `${base}${path}`, headers: {}, body: '{}', signal: connection.signal, provider: 'test' });

    for (let index = 0; index < 3; index += 1) assert.equal((await call('/answer')).body.toString(), '{"ok":true}');
    const running = call('/hold');
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    connection.abort(new Error('client disconnected'));

    const error = await running.then(
      () => assert.fail('the held call should have been cancelled'),
      (reason: unknown) => reason,
    );
    assert.ok(error instanceof GatewayError);
    assert.equal(error.message, 'The request to the model provider was cancelled.');
    await upstreamClosed[0]; // the gateway closed the upstream request
  });

  test('a call whose signal aborted before it started is not sent', async (t) => {
    let received = 0;
    const server = createServer((request, response) => {
      received += 1;
      request.resume();
      response.end('{}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const dispatcher = new Agent();
    t.after(async () => {
      await dispatcher.close();
      server.close();
    });
    const controller = new AbortController();
    controller.abort(new Error('client disconnected'));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    await assert.rejects(
      sendUpstreamBuffered({ dispatcher, timeoutMs: 10_000, streamIdleTimeoutMs: 10_000 }, { url, headers: {}, signal: controller.signal, provider: 'test' }),
      GatewayError,
    );
    assert.equal(received, 0);
  });
});
