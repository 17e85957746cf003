import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '../src/errors/index.js';
import { MAX_STREAM_EVENT_BYTES, startSseStream, type ChatFrames } from '../src/providers/shared/sse-stream.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from '../src/providers/shared/upstream-http.js';
import type { ChatStream, ChatStreamEvent } from '../src/model-api/index.js';
import { eventsOf, readChatStream } from './helpers/chat-streams.js';

/*
 * The stream reader under every streamed provider, against a real HTTP server: events come in
 * network chunks and may be cut anywhere between two, even inside a multi-byte character; a
 * failure before the first event is the call's error, after it the stream's last event; a
 * slow reader pauses the upstream connection.
 */

/** What the server does for one request: chunks written one by one (a pause between), then how it ends. */
interface Script {
  status?: number;
  chunks: (string | Buffer)[];
  end?: 'end' | 'hang' | 'destroy';
  /** Waited for before each chunk after the first. */
  before?: (index: number) => Promise<void>;
}

let script: Script = { chunks: [] };
let lastResponse: ServerResponse | undefined;
let server: Server;
let http: UpstreamHttpOptions;
let url: string;

before(async () => {
  server = createServer((request, response) => {
    request.resume();
    lastResponse = response;
    const { status = 200, chunks, end = 'end', before: wait } = script;
    response.writeHead(status, { 'content-type': status === 200 ? 'text/event-stream' : 'application/json' });
    void (async () => {
      for (const [index, chunk] of chunks.entries()) {
        if (index > 0) await (wait?.(index) ?? sleep(5));
        if (response.destroyed) return;
        response.write(chunk);
      }
      await sleep(5); // the last chunk reaches the client before the end
      if (end === 'end') response.end();
      else if (end === 'destroy') response.destroy();
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  http = { dispatcher: createUpstreamDispatcher({ connectionsPerOrigin: 4, timeoutMs: 2000, streamIdleTimeoutMs: 2000 }), timeoutMs: 2000, streamIdleTimeoutMs: 2000 };
});

after(async () => {
  server.closeAllConnections();
  server.close();
  await http.dispatcher.close();
});

/** Frames of `data: {"n": …}`; `data: [END]` is the marker, `data: bad` fails the stream. */
class NumberedFrames implements ChatFrames {
  read(message: { data: string; event?: string | undefined }, events: ChatStreamEvent[]): boolean {
    if (message.data === '[END]') return true;
    if (message.data === 'bad') throw new GatewayError('provider_error', 'A bad frame.', { logDetail: { frame: 'bad' } });
    events.push({ type: 'chunk-received', chunk: { ...(JSON.parse(message.data) as object), event: message.event ?? null } });
    return false;
  }

  endedEarly(): GatewayError {
    return new GatewayError('provider_error', 'Cut off.', { logDetail: { reason: 'truncated' } });
  }
}

function start(next: Script, signal = new AbortController().signal): Promise<ChatStream> {
  script = next;
  return startSseStream(
    http,
    { url, headers: { 'content-type': 'application/json' }, body: '{}', signal, provider: 'test' },
    { frames: new NumberedFrames(), failure: (status, _headers, text) => new GatewayError('provider_error', `status ${status}: ${text}`) },
  );
}

const contentOf = (events: ChatStreamEvent[]) => events.map((event) => (event.type === 'chunk-received' ? event.chunk : event.type));

describe('startSseStream', () => {
  test('hands over the events of one network chunk together, an event cut between chunks with the chunk that ends it', async () => {
    const euro = Buffer.from('data: {"t":"€"}\n\n');
    const stream = await start({
      chunks: [
        'data: {"n":1}\n\ndata: {"n":2}\n\nda',
        'ta: {"n":3}\n',
        '\nevent: note\ndata: {"n":4}\n\n',
        euro.subarray(0, euro.indexOf(0xe2) + 1), // after the first of the three bytes of €
        euro.subarray(euro.indexOf(0xe2) + 1),
        'data: [END]\n\n',
      ],
    });
    const batches: unknown[][] = [];
    await new Promise<void>((resolve) =>
      stream.read({
        onEvents: (events) => {
          batches.push(contentOf([...events]));
          return true;
        },
        onEnd: resolve,
      }),
    );
    assert.deepEqual(batches, [
      [
        { n: 1, event: null },
        { n: 2, event: null },
      ],
      [
        { n: 3, event: null },
        { n: 4, event: 'note' },
      ],
      [{ t: '€', event: null }],
    ]);
  });

  test('an event the body ends inside of is dropped, as the SSE standard says, so a cut-off stream shows as cut off', async () => {
    const events = await eventsOf(await start({ chunks: ['data: {"n":1}\n\n', 'data: [END]\n'] }));
    assert.deepEqual(contentOf(events), [{ n: 1, event: null }, 'stream-failed']);
    assert.deepEqual(events.at(-1), { type: 'stream-failed', message: 'Cut off.', logDetail: { reason: 'truncated' } });
  });

  test('an error status rejects with the adapter\'s mapping of it and its body', async () => {
    await assert.rejects(start({ status: 429, chunks: ['{"error":', '"slow down"}'] }), { message: 'status 429: {"error":"slow down"}' });
  });

  test('a failure before the first event rejects the call; after it, the stream ends with stream-failed and the connection closes', async () => {
    await assert.rejects(start({ chunks: ['data: bad\n\n'] }), { message: 'A bad frame.' });

    const stream = await start({ chunks: ['data: {"n":1}\n\n', 'data: bad\n\ndata: {"n":2}\n\n'], end: 'hang' });
    const closed = once(lastResponse!, 'close');
    const events = await eventsOf(stream);
    assert.deepEqual(contentOf(events), [{ n: 1, event: null }, 'stream-failed']);
    await closed; // nothing after the failure is read: the upstream connection is closed
  });

  test('after the end-of-stream marker, the rest of the body is ignored and a connection failure is not the caller\'s', async () => {
    const events = await eventsOf(await start({ chunks: ['data: {"n":1}\n\ndata: [END]\n\n', 'data: {"n":2}\n\n'], end: 'destroy' }));
    assert.deepEqual(contentOf(events), [{ n: 1, event: null }]);
  });

  test('a connection cut mid-stream ends it with stream-failed', async () => {
    const events = await eventsOf(await start({ chunks: ['data: {"n":1}\n\n', 'data: {"n":2}\n\n'], end: 'destroy' }));
    assert.deepEqual(contentOf(events), [{ n: 1, event: null }, { n: 2, event: null }, 'stream-failed']);
    assert.match((events.at(-1) as { message: string }).message, /failed during the stream/);
  });

  test('a reader that returns false gets nothing more until it resumes the stream', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const stream = await start({
      chunks: ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: {"n":3}\n\ndata: [END]\n\n'],
      before: (index) => (index === 1 ? released : sleep(5)),
    });
    const seen: unknown[] = [];
    let ended = false;
    stream.read({
      onEvents: (events) => {
        seen.push(...contentOf([...events]));
        return false; // always full
      },
      onEnd: () => (ended = true),
    });
    assert.deepEqual(seen, [{ n: 1, event: null }]);
    release();
    await sleep(150); // the server sends the rest meanwhile
    assert.deepEqual(seen, [{ n: 1, event: null }], 'nothing is handed over while paused');
    for (let step = 0; step < 50 && !ended; step += 1) {
      stream.resume();
      await sleep(10);
    }
    assert.deepEqual(seen, [
      { n: 1, event: null },
      { n: 2, event: null },
      { n: 3, event: null },
    ]);
    assert.ok(ended);
  });

  test('an abort ends a running stream with stream-failed and closes the upstream connection', async () => {
    const controller = new AbortController();
    const reading = readChatStream(await start({ chunks: ['data: {"n":1}\n\n'], end: 'hang' }, controller.signal));
    const closed = once(lastResponse!, 'close');
    assert.equal(reading.events.length, 1);
    controller.abort(new Error('client disconnected'));
    await closed;
    const events = await reading.ended;
    assert.equal(events.at(-1)?.type, 'stream-failed');
    assert.match((events.at(-1) as { message: string }).message, /cancelled/);
  });

  test('a reader that throws on events (a frame it cannot take) gets stream-failed and its end; nothing escapes to undici or the process', async () => {
    for (const throwOn of [1, 2]) {
      const seen: unknown[] = [];
      let calls = 0;
      // Each frame is written once the reader took the one before, so each is a batch of its own however busy the machine.
      const readerTook = async (index: number) => {
        while (calls < index && !seen.includes('stream-failed')) await sleep(1);
      };
      const stream = await start({ chunks: ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: {"n":3}\n\n', 'data: [END]\n\n'], before: readerTook });
      await new Promise<void>((resolve) =>
        stream.read({
          onEvents: (events) => {
            calls += 1;
            seen.push(...contentOf([...events]));
            // The first batch is handed over inside read(), the second from undici's data callback.
            if (calls === throwOn) throw new TypeError('Cannot read properties of null');
            return true;
          },
          onEnd: resolve,
        }),
      );
      assert.deepEqual(seen.slice(0, throwOn), [1, 2].slice(0, throwOn).map((n) => ({ n, event: null })), `throwing on batch ${throwOn}`);
      assert.equal(seen.at(-1), 'stream-failed', `throwing on batch ${throwOn}: ${JSON.stringify(seen)}`);
      assert.equal(seen.length, throwOn + 1);
    }
  });

  test('an event that never ends fails the stream at MAX_STREAM_EVENT_BYTES instead of being held whole', async () => {
    const mebibyte = Buffer.alloc(1024 * 1024, 'x');
    const pieces = Array.from({ length: MAX_STREAM_EVENT_BYTES / mebibyte.length + 2 }, () => mebibyte);
    const events = await eventsOf(await start({ chunks: ['data: {"n":1}\n\n', 'data: {"n":"', ...pieces, '"}\n\n', 'data: [END]\n\n'], before: async () => undefined }));
    assert.deepEqual(contentOf(events), [{ n: 1, event: null }, 'stream-failed']);
    assert.match((events.at(-1) as { message: string }).message, /too large/);

    // Many events adding up to more than the bound are fine: the count starts again at each.
    const small = Array.from({ length: 40 }, (_, index) => `data: {"n":${index},"pad":"${'y'.repeat(512 * 1024)}"}\n\n`);
    const many = await eventsOf(await start({ chunks: [...small, 'data: [END]\n\n'], before: async () => undefined }));
    assert.equal(many.length, 40);
    assert.ok(many.every((event) => event.type === 'chunk-received'));
  });
});
