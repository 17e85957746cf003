import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * Server-sent events of a response body, parsed by eventsource-parser: the events of each
 * network chunk together, so a reader pays one turn of an async generator per chunk rather
 * than per event. A reader that stops early destroys the body, unless `destroyOnReturn` is
 * false: then the caller finishes it (see finishBody).
 */
export async function* readServerSentEventBatches(body: Readable, { destroyOnReturn = true } = {}): AsyncGenerator<EventSourceMessage[]> {
  let batch: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => batch.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of body.iterator({ destroyOnReturn }) as AsyncIterable<Uint8Array | string>) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    if (batch.length > 0) {
      const events = batch;
      batch = [];
      yield events;
    }
  }
  parser.reset({ consume: true });
  if (batch.length > 0) yield batch;
}

/** Server-sent events of a response body one at a time (see readServerSentEventBatches). */
export async function* readServerSentEvents(body: Readable, options: { destroyOnReturn?: boolean } = {}): AsyncGenerator<EventSourceMessage> {
  for await (const events of readServerSentEventBatches(body, options)) yield* events;
}

/**
 * Finishes a streamed response body its reader is done with. A complete stream is read to its
 * end, so its connection goes back to the pool: destroying an unfinished undici body closes
 * the connection (and the next call pays for a new one, with an error object and its stack
 * trace on the way). Anything else is destroyed.
 */
export function finishBody(body: Readable, complete: boolean): void {
  if (body.destroyed || body.readableEnded) return;
  // Nothing listens any more; an error from here on (the abort itself) is of no interest.
  body.on('error', () => undefined);
  if (complete) body.resume();
  else body.destroy();
}

/**
 * Waits for the first item of an async iterator, then returns an iterable of all items
 * (the first one included). Lets `stream()` resolve only once the provider's first frame
 * arrived, so earlier failures still get their proper HTTP status. After the first item it
 * hands out the source's own results: no extra generator between every event and its reader.
 */
export async function afterFirstItem<T>(source: AsyncGenerator<T>): Promise<AsyncIterable<T>> {
  let first: IteratorResult<T> | null = await source.next();
  const iterator: AsyncIterator<T> = {
    next: () => {
      if (first === null) return source.next();
      const result = first;
      first = null;
      return Promise.resolve(result);
    },
    // A reader that stops early ends the source too (its cleanup runs).
    return: (value?: unknown) => source.return(value as T),
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
