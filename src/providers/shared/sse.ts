import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** Server-sent events of a response body, parsed by eventsource-parser. */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    while (pending.length > 0) yield pending.shift()!;
  }
  parser.reset({ consume: true });
  while (pending.length > 0) yield pending.shift()!;
}

/**
 * Waits for the first item of an async iterator, then returns an iterable of all items
 * (the first one included). Lets `stream()` resolve only once the provider's first frame
 * arrived, so earlier failures still get their proper HTTP status.
 */
export async function afterFirstItem<T>(source: AsyncGenerator<T>): Promise<AsyncIterable<T>> {
  const first = await source.next();
  return {
    async *[Symbol.asyncIterator]() {
      if (first.done === true) return;
      yield first.value;
      yield* { [Symbol.asyncIterator]: () => source };
    },
  };
}
