import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { readServerSentEventBatches, readServerSentEvents } from '../src/providers/shared/sse.js';

/*
 * The SSE reader under every streamed provider: events come in network chunks, and an event
 * may be cut anywhere between two chunks, even inside a multi-byte character.
 */

const body = (chunks: (string | Buffer)[]) => Readable.from(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

describe('readServerSentEventBatches', () => {
  test('hands out the events of one network chunk together, and an event cut between chunks with the chunk that ends it', async () => {
    const euro = Buffer.from('data: {"t":"€"}\n\n');
    const batches = await collect(
      readServerSentEventBatches(
        body([
          'data: {"n":1}\n\ndata: {"n":2}\n\nda',
          'ta: {"n":3}\n',
          '\nevent: error\ndata: {"n":4}\n\n',
          euro.subarray(0, euro.indexOf(0xe2) + 1), // after the first of the three bytes of €
          euro.subarray(euro.indexOf(0xe2) + 1),
        ]),
      ),
    );
    assert.deepEqual(
      batches.map((batch) => batch.map((event) => [event.event ?? null, event.data])),
      [
        [
          [null, '{"n":1}'],
          [null, '{"n":2}'],
        ],
        [
          [null, '{"n":3}'],
          ['error', '{"n":4}'],
        ],
        [[null, '{"t":"€"}']],
      ],
    );
  });

  test('an event the body ends inside of is dropped, as the SSE standard says, so a cut-off stream shows as cut off', async () => {
    const batches = await collect(readServerSentEventBatches(body(['data: one\n\ndata: [DONE]\n'])));
    assert.deepEqual(
      batches.map((batch) => batch.map((event) => event.data)),
      [['one']],
    );
  });
});

describe('readServerSentEvents', () => {
  test('hands out the same events one at a time, in order', async () => {
    const events = await collect(readServerSentEvents(body(['data: a\n\ndata: b\n\n', 'data: c\n\n'])));
    assert.deepEqual(
      events.map((event) => event.data),
      ['a', 'b', 'c'],
    );
  });
});
