import type { EventStream, StreamReader } from '../model-api/index.js';

/**
 * Wraps a provider's stream so that the events handed on are also kept, in the batches they
 * came in (one upstream network chunk each). `ended` is told once, with the batches when the
 * stream ended complete (no failure event, `complete()` true), else null. Recording stops
 * (and the stream is not kept) once more than `maxCharacters` of event text were seen.
 */
export function recordedStream<E extends { type: string }>(
  stream: EventStream<E>,
  maxCharacters: number,
  complete: () => boolean,
  ended: (batches: E[][] | null) => void,
): EventStream<E> {
  return {
    read(reader: StreamReader<E>): void {
      let batches: E[][] | null = [];
      let characters = 0;
      stream.read({
        onEvents(events: readonly E[]): boolean {
          if (batches !== null) {
            for (const event of events) {
              if (event.type === 'stream-failed') batches = null;
              else characters += approximateLength(event);
            }
            if (characters > maxCharacters) batches = null;
            batches?.push([...events]);
          }
          return reader.onEvents(events);
        },
        onEnd(): void {
          try {
            reader.onEnd();
          } finally {
            ended(batches !== null && complete() ? batches : null);
          }
        },
      });
    },
    resume: () => stream.resume(),
  };
}

/** About how long an event is as JSON: its text when it carries it, else a bound from its members. */
function approximateLength(event: object): number {
  const { json, data } = event as { json?: unknown; data?: unknown };
  if (typeof json === 'string') return json.length * 2;
  if (typeof data === 'string') return data.length * 2;
  return JSON.stringify(event).length;
}

/**
 * A kept stream replayed: its batches handed to the reader in order (each batch is one write
 * to the client), from the next turn of the event loop, pausing while the reader's client is
 * slow; then the end.
 */
export function replayedStream<E>(batches: readonly (readonly E[])[]): EventStream<E> {
  let reader: StreamReader<E> | undefined;
  let next = 0;
  let paused = false;
  let ended = false;
  const step = (): void => {
    if (reader === undefined || ended) return;
    while (next < batches.length) {
      const batch = batches[next]!;
      next += 1;
      if (!reader.onEvents(batch)) {
        paused = true;
        return;
      }
    }
    ended = true;
    reader.onEnd();
  };
  return {
    read(given: StreamReader<E>): void {
      reader = given;
      setImmediate(step);
    },
    resume(): void {
      if (!paused) return;
      paused = false;
      setImmediate(step);
    },
  };
}
