import type { ChatStreamEvent, JsonObject } from '../../providers/index.js';
import { eventFrame } from './frames.js';

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * The stream encoder for a provider that speaks the Responses API itself: its events go to
 * the caller as it sent them (reasoning items, built-in tool calls and all), each on its own
 * `event:` line; only the response's `model` in the lifecycle events (`response.created`, …,
 * `response.completed`) is the model the caller asked for. The last response object seen is
 * kept, to store and log. The final event (`response.completed`, `.incomplete` or `.failed`)
 * is held back until `finish`, so the response can be stored before the caller sees its end.
 */
export class ResponsesPassThroughEncoder {
  private lastSequence = -1;
  private last: JsonObject | null = null;
  private held = '';

  constructor(private readonly requestedModel: string) {}

  /** The response as the provider's last lifecycle event showed it (null before the first). */
  get response(): JsonObject | null {
    return this.last;
  }

  start(): string {
    return '';
  }

  encode(event: ChatStreamEvent): string {
    if (event.type !== 'chunk-received') return '';
    const { chunk } = event;
    const type = String(chunk.type);
    if (typeof chunk.sequence_number === 'number') this.lastSequence = chunk.sequence_number;
    const response = chunk.response;
    if (typeof response === 'object' && response !== null && !Array.isArray(response)) {
      this.last = { ...(response as JsonObject), model: this.requestedModel };
      const frame = eventFrame(type, JSON.stringify({ ...chunk, response: this.last }));
      if (!FINAL_EVENTS.has(type)) return frame;
      this.held = frame;
      return '';
    }
    // A line break in the text would end the event early: such text is written again.
    const json = event.json !== undefined && !event.json.includes('\n') && !event.json.includes('\r') ? event.json : JSON.stringify(chunk);
    return eventFrame(type, json);
  }

  finish(): string {
    return this.held;
  }

  /** Ends a stream the provider failed after it began: `response.failed` numbered after its last event. */
  fail(message: string): string {
    this.last = { ...(this.last ?? { object: 'response', model: this.requestedModel, output: [] }), status: 'failed', error: { code: 'server_error', message } };
    this.lastSequence += 1;
    return eventFrame('response.failed', JSON.stringify({ type: 'response.failed', response: this.last, sequence_number: this.lastSequence }));
  }
}
