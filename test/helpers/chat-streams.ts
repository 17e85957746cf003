import type { ChatStream, ChatStreamEvent } from '../../src/model-api/index.js';

/**
 * Reads a provider's chat stream the way the route does, taking every batch. `events` fills
 * as they come (the first batch during this call); `ended` resolves with all of them.
 */
export function readChatStream(stream: ChatStream): { events: ChatStreamEvent[]; ended: Promise<ChatStreamEvent[]> } {
  const events: ChatStreamEvent[] = [];
  const ended = new Promise<ChatStreamEvent[]>((resolve) =>
    stream.read({
      onEvents: (batch) => {
        events.push(...batch);
        return true;
      },
      onEnd: () => resolve(events),
    }),
  );
  return { events, ended };
}

/** All events of a chat stream, once it ended. */
export function eventsOf(stream: ChatStream): Promise<ChatStreamEvent[]> {
  return readChatStream(stream).ended;
}
