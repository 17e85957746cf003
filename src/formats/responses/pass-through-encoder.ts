import type { GatewayError } from '../../errors/index.js';
import type { JsonObject, ResponseEventReceived, TokenUsage, UsageReported } from '../../model-api/index.js';
import type { StreamEncoder } from '../types.js';
import { eventFrame } from './frames.js';

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /\r\n|[\r\n]/g;

/** An event's `sequence_number`; -1 when there was no event or it has none. */
function sequenceNumberOf(json: string | null): number {
  if (json === null) return -1;
  try {
    const sequence = (JSON.parse(json) as { sequence_number?: unknown } | null)?.sequence_number;
    return typeof sequence === 'number' ? sequence : -1;
  } catch {
    return -1;
  }
}

export interface PassThroughSettings {
  /** The model the caller asked for: the lifecycle events show it. */
  requestedModel: string;
  /** Keeps the finished response before the caller sees its last event; never rejects. */
  keep(response: JsonObject): Promise<void>;
  /** The id the lifecycle events show instead of the provider's (a stream replayed from the response cache). */
  responseId?: string;
}

/**
 * The stream encoder for a provider that speaks the Responses API itself: its events go to
 * the caller as it sent them (reasoning items, built-in tool calls and all), each on its own
 * `event:` line; only the response's `model` in the lifecycle events (`response.created`, …,
 * `response.completed`) is the model the caller asked for. The final event is held back
 * until `end`, so the response is kept before the caller sees its end; the request log gets
 * the last response object the stream showed.
 */
export class ResponsesPassThroughEncoder implements StreamEncoder<ResponseEventReceived> {
  /** The text of the last event sent: its sequence number is read only if a failure must follow it. */
  private lastEventJson: string | null = null;
  private last: JsonObject | null = null;
  private held = '';

  constructor(private readonly settings: PassThroughSettings) {}

  encode(received: ResponseEventReceived): string {
    const { event, eventType: type } = received;
    this.lastEventJson = received.json;
    const response = event?.response;
    if (typeof response !== 'object' || response === null || Array.isArray(response)) {
      // A line break would end the event early. JSON strings hold none unescaped, so each is
      // whitespace between tokens, and a space means the same.
      return eventFrame(type, LINE_BREAK.test(received.json) ? received.json.replace(LINE_BREAKS, ' ') : received.json);
    }
    const id = this.settings.responseId;
    this.last = { ...(response as JsonObject), model: this.settings.requestedModel, ...(id === undefined ? {} : { id }) };
    const frame = eventFrame(type, JSON.stringify({ ...event, response: this.last }));
    if (!FINAL_EVENTS.has(type)) return frame;
    this.held = frame;
    return '';
  }

  usage(_event: UsageReported): string {
    return '';
  }

  /** Keeps a finished response (completed or incomplete, not failed), then sends the held final event. */
  async end(_usage: TokenUsage | null): Promise<string> {
    if (this.last !== null && (this.last.status === 'completed' || this.last.status === 'incomplete')) await this.settings.keep(this.last);
    return this.held;
  }

  /** Ends a stream the provider failed after it began: `response.failed`, numbered after its last event. */
  fail(error: GatewayError): string {
    this.last = {
      ...(this.last ?? { object: 'response', model: this.settings.requestedModel, output: [] }),
      status: 'failed',
      error: { code: 'server_error', message: error.message },
    };
    const sequence = sequenceNumberOf(this.lastEventJson) + 1;
    return eventFrame('response.failed', JSON.stringify({ type: 'response.failed', response: this.last, sequence_number: sequence }));
  }

  transcript(_usage: TokenUsage | null, complete: boolean): JsonObject {
    return { ...(this.last ?? { object: 'response' }), complete };
  }
}
