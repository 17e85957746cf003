import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { RequestRecord } from '../../logs/types.js';
import type { ChatStream, ChatStreamEvent, ChatStreamReader, JsonObject } from '../../providers/index.js';

/** Turns a provider stream's events into a public format's server-sent events. */
export interface StreamEncoder {
  /** Frames sent before the first event. */
  start(): string;
  /** Frames for one event (may hold some back until `finish`). */
  encode(event: ChatStreamEvent): string;
  /** The last frames of a stream that ended well. */
  finish(): string;
  /** The last frames of a stream the provider failed. */
  fail(message: string): string;
  /** The answer as the frames told it, for the log and the store (null: none yet). */
  readonly response: JsonObject | null;
}

export interface EventStreamOptions {
  /** Fires when the client went away. */
  signal: AbortSignal;
  record: RequestRecord;
  /**
   * Called with the finished answer before the last frames go out (a stored response can then
   * be read, or continued, as soon as the caller has its end); a failure is the caller's to log.
   */
  beforeLastFrames(response: JsonObject | null): Promise<void>;
}

/**
 * Sends a provider stream to the client through a format's encoder, once the provider's first
 * event arrived. Like the chat stream relay: the reply is hijacked and written to directly,
 * one write per upstream network chunk, a slow client pauses the provider.
 */
export function sendEventStream(reply: FastifyReply, stream: ChatStream, encoder: StreamEncoder, options: EventStreamOptions): FastifyReply {
  reply.hijack();
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  reply.raw.writeHead(200, headers);
  reply.raw.write(encoder.start());
  options.record.pendingWork = new Promise<void>((finished) => stream.read(new EventStreamRelay(stream, reply.raw, encoder, options, finished)));
  return reply;
}

class EventStreamRelay implements ChatStreamReader {
  private failure: { message: string; logDetail?: Record<string, unknown> | undefined } | null = null;

  constructor(
    private readonly stream: ChatStream,
    private readonly output: ServerResponse,
    private readonly encoder: StreamEncoder,
    private readonly options: EventStreamOptions,
    private readonly finished: () => void,
  ) {}

  onEvents(events: readonly ChatStreamEvent[]): boolean {
    if (this.gone() || this.failure !== null) return true;
    let frames = '';
    for (const event of events) {
      if (event.type === 'stream-failed') {
        this.failure = event;
        break;
      }
      if (event.type === 'usage-reported') this.options.record.usage = event.usage;
      frames += this.encoder.encode(event);
    }
    if (frames.length === 0 || this.output.write(frames)) return true;
    this.output.once('drain', () => this.stream.resume());
    return false;
  }

  onEnd(): void {
    const { record } = this.options;
    if (this.gone()) {
      if (this.options.signal.aborted) record.errorCode = 'client_closed';
      record.responsePayload = this.encoder.response;
      this.output.destroy();
      this.finished();
      return;
    }
    let frames: string;
    if (this.failure !== null) {
      record.errorCode = 'provider_error';
      record.logDetail = this.failure.logDetail ?? null;
      frames = this.encoder.fail(this.failure.message);
    } else {
      frames = this.encoder.finish();
    }
    record.responsePayload = this.encoder.response;
    void this.options
      .beforeLastFrames(this.encoder.response)
      .finally(() => this.output.end(frames))
      .finally(this.finished);
  }

  private gone(): boolean {
    return this.options.signal.aborted || this.output.destroyed;
  }
}
