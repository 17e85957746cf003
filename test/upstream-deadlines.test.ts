import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '../src/errors/index.js';
import { startSseStream, type ChatFrames } from '../src/providers/shared/sse-stream.js';
import { createUpstreamDispatcher, readBodyText, sendUpstream, sendUpstreamBuffered, type UpstreamHttpOptions, type UpstreamRequest } from '../src/providers/shared/upstream-http.js';
import type { ChatStreamEvent } from '../src/model-api/index.js';
import { eventsOf } from './helpers/chat-streams.js';

/*
 * Every wait on a provider has a deadline: the wait for a pooled connection counts towards
 * upstream.timeoutMs, a whole answer must arrive within it however its bytes trickle, and a
 * stream is kept open by events, not by comment lines (upstream.streamIdleTimeoutMs). Each hostile server below stops on
 * its own after a few seconds, so without the deadline a call ends late with an answer
 * instead of hanging the test.
 */

const TIMEOUT_MS = 400;
const IDLE_MS = 400;
/** How long each hostile behaviour lasts before the server gives up and answers normally. */
const HOSTILE_MS = 3_000;

let server: Server;
let origin: string;
const open = new Set<ServerResponse>();

/** Writes `unit` every 50 ms for HOSTILE_MS, then `last`, then ends. */
async function trickle(response: ServerResponse, unit: string, last: string): Promise<void> {
  const until = Date.now() + HOSTILE_MS;
  while (Date.now() < until && !response.destroyed) {
    response.write(unit);
    await sleep(50);
  }
  if (!response.destroyed) response.end(last);
}

before(async () => {
  server = createServer((request, response) => {
    request.resume();
    open.add(response);
    response.once('close', () => open.delete(response));
    const path = request.url ?? '/';
    if (path === '/hold') {
      // Holds its connection without a word, then answers.
      setTimeout(() => response.destroyed || response.end('{}'), HOSTILE_MS);
    } else if (path === '/trickle') {
      response.writeHead(200, { 'content-type': 'application/json' });
      void trickle(response, ' ', '{"ok":true}');
    } else if (path === '/comments-first') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      void trickle(response, ':\n', 'data: {"n":1}\n\ndata: [END]\n\n');
    } else if (path === '/comments-after') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"n":1}\n\n');
      void trickle(response, ': keep-alive\n\n', 'data: {"n":2}\n\ndata: [END]\n\n');
    } else {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const response of open) response.destroy();
  server.close();
});

function httpOptions(connectionsPerOrigin: number): UpstreamHttpOptions {
  return {
    dispatcher: createUpstreamDispatcher({ connectionsPerOrigin, timeoutMs: 60_000, streamIdleTimeoutMs: 60_000 }),
    timeoutMs: TIMEOUT_MS,
    streamIdleTimeoutMs: IDLE_MS,
  };
}

function call(path: string, signal = new AbortController().signal): UpstreamRequest {
  return { url: `${origin}${path}`, headers: { 'content-type': 'application/json' }, body: '{}', signal, provider: 'test' };
}

class NumberedFrames implements ChatFrames {
  read(message: { data: string }, events: ChatStreamEvent[]): boolean {
    if (message.data === '[END]') return true;
    events.push({ type: 'chunk-received', chunk: { ...(JSON.parse(message.data) as object) } });
    return false;
  }

  endedEarly(): GatewayError {
    return new GatewayError('provider_error', 'Cut off.');
  }
}

function stream(http: UpstreamHttpOptions, path: string) {
  return startSseStream(http, call(path), { frames: new NumberedFrames(), failure: (status) => new GatewayError('provider_error', `status ${status}`) });
}

const timedOut = (reason: RegExp) => (error: unknown) => {
  assert.ok(error instanceof GatewayError, String(error));
  assert.equal(error.code, 'provider_timeout');
  assert.equal(error.status, 504);
  assert.match(String(error.logDetail?.reason), reason);
  return true;
};

describe('upstream deadlines', () => {
  test('a call that waits for a pooled connection held by another gets 504 within upstream.timeoutMs, its log saying why', async () => {
    const http = httpOptions(1);
    try {
      const holder = new AbortController();
      const held = sendUpstreamBuffered({ ...http, timeoutMs: 60_000 }, call('/hold', holder.signal)).catch(() => undefined);
      await sleep(50); // the held call has the only connection
      await assert.rejects(sendUpstreamBuffered(http, call('/answer')), timedOut(/no free connection to the provider/));
      await assert.rejects(sendUpstream(http, call('/answer')), timedOut(/no answer within upstream\.timeoutMs/));
      holder.abort(new Error('test over'));
      await held;
    } finally {
      await http.dispatcher.destroy();
    }
  });

  test('a whole answer whose body trickles a byte at a time ends at the deadline (buffered and streamed reads)', async () => {
    const http = httpOptions(4);
    try {
      await assert.rejects(sendUpstreamBuffered(http, call('/trickle')), timedOut(/no answer within upstream\.timeoutMs/));
      const response = await sendUpstream(http, call('/trickle'));
      await assert.rejects(readBodyText(response.body), timedOut(/no answer within upstream\.timeoutMs/));
    } finally {
      await http.dispatcher.destroy();
    }
  });

  test('comment lines do not count as the first event: the call gets 504', async () => {
    const http = httpOptions(4);
    try {
      await assert.rejects(stream(http, '/comments-first'), timedOut(/no stream event within upstream\.streamIdleTimeoutMs/));
    } finally {
      await http.dispatcher.destroy();
    }
  });

  test('a stream that sends only comment lines after its first event ends with stream-failed after upstream.streamIdleTimeoutMs', async () => {
    const http = httpOptions(4);
    try {
      const events = await eventsOf(await stream(http, '/comments-after'));
      assert.deepEqual(
        events.map((event) => event.type),
        ['chunk-received', 'stream-failed'],
      );
      assert.deepEqual(events.at(-1), {
        type: 'stream-failed',
        message: 'The model provider stopped sending its answer. Try again later.',
        logDetail: { provider: 'test', reason: 'no stream event within upstream.streamIdleTimeoutMs' },
      });
    } finally {
      await http.dispatcher.destroy();
    }
  });

  test('an answer in time is not touched by the deadline', async () => {
    const http = httpOptions(4);
    try {
      const answer = await sendUpstreamBuffered(http, call('/answer'));
      assert.equal(answer.body.toString(), '{"ok":true}');
      const response = await sendUpstream(http, call('/answer'));
      assert.equal(await readBodyText(response.body), '{"ok":true}');
    } finally {
      await http.dispatcher.destroy();
    }
  });
});
