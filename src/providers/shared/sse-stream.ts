import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Dispatcher } from 'undici';
import { GatewayError } from '../../errors/index.js';
import { withoutKnownSecrets } from '../../redaction/index.js';
import type { ChatStreamEvent, EventStream, StreamEvent, StreamReader } from '../../model-api/index.js';
import { whenAborted } from './abort-listeners.js';
import {
  answerTimeout,
  deadlineOf,
  deadlineReason,
  dispatchUpstream,
  noteProviderRequestId,
  ERROR_BODY_LIMIT_BYTES,
  isAnswerStatus,
  transportError,
  type UpstreamHttpOptions,
  type UpstreamRequest,
  type UpstreamResponse,
} from './upstream-http.js';

type Headers = UpstreamResponse['headers'];

/**
 * The most a stream may send without completing an event. A chat chunk is a few hundred
 * bytes and a streamed partial image a few MiB; a provider sending one endless event would
 * otherwise have the parser hold all of it, several times over while it is decoded and
 * joined, until the process runs out of memory.
 */
export const MAX_STREAM_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * How a stream's bytes are cut into its messages: server-sent events by default, or another
 * framing (AWS's binary event stream, bedrock/event-stream.ts). `end` drops a message the
 * body ended inside of, so a cut-off stream shows as cut off.
 */
export interface StreamFraming {
  feed(chunk: Buffer): void;
  end(): void;
}

export type Framer<M> = (onMessage: (message: M) => void) => StreamFraming;

/**
 * Server-sent events (eventsource-parser), decoded as UTF-8 across network chunks. An event
 * that echoes one of the gateway's own credentials has it redacted before anything reads it.
 */
export const SSE_FRAMING: Framer<EventSourceMessage> = (onMessage) => {
  const decoder = new StringDecoder('utf8');
  const parser = createParser({
    onEvent: (event) => {
      const data = withoutKnownSecrets(event.data);
      onMessage(data === event.data ? event : { ...event, data });
    },
  });
  return { feed: (chunk) => parser.feed(decoder.write(chunk)), end: () => parser.reset({ consume: true }) };
};

/** What an adapter knows about its provider's stream messages `M` (server-sent events unless said otherwise), read into events `E`. */
export interface StreamFrames<E, M = EventSourceMessage> {
  /**
   * Maps one message to stream events, pushed onto `events`. Returns true for the
   * provider's end-of-stream marker: what follows it is ignored. Throws a GatewayError for an
   * event that fails the stream (an error event, a frame it cannot read).
   */
  read(message: M, events: E[]): boolean;
  /**
   * The body ended without the marker: the failure to report, or null when that is how the
   * provider ends a complete stream (one without a marker).
   */
  endedEarly(): GatewayError | null;
  /** Before a failure after the first event is reported: events still owed (usage counted so far). */
  beforeFailure?(events: E[]): void;
}

/** The frames of a chat stream. */
export type ChatFrames = StreamFrames<ChatStreamEvent>;

export interface SseStreamOptions<E, M = EventSourceMessage> {
  frames: StreamFrames<E, M>;
  /** How the bytes are cut into messages (default: server-sent events). */
  framing?: Framer<M>;
  /** Maps an error status and its body (text, bounded) to the failure the call rejects with. */
  failure(status: number, headers: Headers, text: string): GatewayError;
}

/**
 * A stream from a provider that speaks server-sent events (chat chunks, or a native API's own events): one undici dispatch whose
 * handler decodes, parses and maps each network chunk as it arrives and hands its events to
 * the reader in the same turn. `startSseStream` resolves once the first event was read,
 * so a failure before it (an error status, a first frame that fails, a body without events)
 * rejects with a GatewayError and the client still gets a proper status. A failure after it
 * becomes a `stream-failed` event. A slow reader pauses the upstream connection.
 *
 * Its clock: the response headers must arrive within `timeoutMs` of the call's start (a wait
 * for a free pooled connection included), then each event, the first too, within
 * `streamIdleTimeoutMs` of the one before. Events, not bytes, reset it: a provider that
 * sends only `:` comment lines (keep-alives) would otherwise hold the caller's stream open
 * for ever. It stops while the reader waits.
 */
class SseStream<D, M> implements Dispatcher.DispatchHandler, EventStream<StreamEvent<D>> {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: Headers = {};
  private readonly errorChunks: Buffer[] = [];
  private errorBytes = 0;
  private parser: StreamFraming | undefined;
  /** Bytes fed to the parser since the network chunk in which the last event ended. */
  private eventBytes = 0;
  /** Events read and not yet handed to the reader. */
  private pending: StreamEvent<D>[] = [];
  /** `startSseStream` resolved (or rejected). */
  private callSettled = false;
  /** The provider's end-of-stream marker arrived. */
  private complete = false;
  /** No more events: completed, failed or aborted. */
  private ended = false;
  /** undici is done with the call (its response ended or failed): nothing left to abort or pause. */
  private responseDone = false;
  private endHandedOver = false;
  /** The reader asked to wait (returned false) and has not resumed yet. */
  private waiting = false;
  private reader: StreamReader<StreamEvent<D>> | undefined;
  private readonly stopListening: () => void;
  private clock: NodeJS.Timeout;
  /** The answer's headers arrived: the clock runs `streamIdleTimeoutMs` from each event on. */
  private answering = false;
  private readonly started = performance.now();

  constructor(
    private readonly http: UpstreamHttpOptions,
    private readonly request: UpstreamRequest,
    private readonly options: SseStreamOptions<StreamEvent<D>, M>,
    private readonly resolve: (stream: EventStream<StreamEvent<D>>) => void,
    private readonly reject: (error: GatewayError) => void,
  ) {
    this.stopListening = whenAborted(request.signal, () => this.onAbort());
    this.clock = setTimeout(() => this.outOfTime(), deadlineOf(http, request));
  }

  /** The clock from the answer's headers to its first event: streamIdleTimeoutMs, or what remains of the call's own deadline. */
  private firstEventMs(): number {
    if (this.request.timeoutMs === undefined) return this.http.streamIdleTimeoutMs;
    return Math.max(1, Math.min(this.http.streamIdleTimeoutMs, this.request.timeoutMs - (performance.now() - this.started)));
  }

  read(reader: StreamReader<StreamEvent<D>>): void {
    this.reader = reader;
    this.deliver();
  }

  resume(): void {
    if (!this.waiting) return;
    this.waiting = false;
    this.deliver();
    if (!this.waiting && !this.responseDone) {
      this.controller?.resume();
      if (!this.ended) this.clock = setTimeout(() => this.outOfTime(), this.http.streamIdleTimeoutMs);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.ended) controller.abort(new Error('the stream ended before it had a connection'));
    else if (this.request.signal.aborted) controller.abort(this.request.signal.reason);
  }

  /** No response headers within timeoutMs, or no event within streamIdleTimeoutMs. */
  private outOfTime(): void {
    if (this.complete) return; // the answer is whole; only the end of its body is awaited
    if (this.answering) {
      this.fail(
        new GatewayError('provider_timeout', 'The model provider stopped sending its answer. Try again later.', {
          logDetail: { provider: this.request.provider, reason: 'no stream event within upstream.streamIdleTimeoutMs' },
        }),
      );
    } else {
      this.fail(answerTimeout(this.request.provider, deadlineReason(this.controller === undefined)));
    }
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    this.status = statusCode;
    this.headers = headers;
    noteProviderRequestId(this.request, headers);
    if (!isAnswerStatus(statusCode)) return; // the error body is read within what remains of timeoutMs
    this.parser = (this.options.framing ?? (SSE_FRAMING as unknown as Framer<M>))((message) => this.onMessage(message));
    this.answering = true;
    clearTimeout(this.clock);
    this.clock = setTimeout(() => this.outOfTime(), this.firstEventMs());
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.parser === undefined) {
      if (this.errorBytes < ERROR_BODY_LIMIT_BYTES) this.errorChunks.push(chunk);
      this.errorBytes += chunk.length;
      return;
    }
    if (this.complete || this.ended) return; // read to the end so the connection is reused
    this.eventBytes += chunk.length;
    if (this.eventBytes > MAX_STREAM_EVENT_BYTES) {
      this.fail(
        new GatewayError('provider_error', 'The model provider sent a stream event that is too large. Try again later.', {
          logDetail: { provider: this.request.provider, reason: `stream event over ${MAX_STREAM_EVENT_BYTES} bytes` },
        }),
      );
      return;
    }
    try {
      this.parser.feed(chunk);
    } catch (error) {
      // A framing that cannot read the bytes (a corrupt binary message) fails the stream, never the process.
      this.fail(error);
      return;
    }
    this.deliver();
  }

  onResponseEnd(): void {
    this.responseDone = true;
    if (this.parser === undefined) {
      clearTimeout(this.clock);
      this.stopListening();
      const text = Buffer.concat(this.errorChunks).subarray(0, ERROR_BODY_LIMIT_BYTES).toString('utf8');
      this.reject(this.options.failure(this.status, this.headers, text));
      return;
    }
    if (this.ended) return;
    // An event the body ends inside of is dropped (the SSE standard), so a cut-off stream shows as cut off.
    if (!this.complete) this.parser.end();
    const endedEarly = this.complete ? null : this.options.frames.endedEarly();
    if (endedEarly !== null) this.fail(endedEarly);
    else this.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.responseDone = true;
    if (this.ended) return;
    // After the marker the answer is whole: a failure while the rest of the body drains is not the caller's.
    if (this.complete) this.end();
    else this.fail(error);
  }

  private onMessage(message: M): void {
    this.eventBytes = 0;
    if (this.complete || this.ended) return;
    this.clock.refresh();
    try {
      this.complete = this.options.frames.read(message, this.pending);
    } catch (error) {
      this.fail(error);
    }
  }

  /** The call's signal aborted (the client went away): stop reading, and stop waiting for the reader. */
  private onAbort(): void {
    this.waiting = false;
    if (this.responseDone) this.deliver();
    else this.controller?.abort(this.request.signal.reason as Error);
  }

  /**
   * Hands what was read to the reader (once there is one and it is not waiting), and starts
   * the stream at its first event. Chunks undici delivers after the reader asked to wait
   * (the pause takes effect from the next chunk on) stay here until it resumes.
   */
  private deliver(): void {
    if (!this.callSettled) {
      if (this.pending.length === 0 && !this.ended) return;
      this.callSettled = true;
      this.resolve(this);
    }
    if (this.reader === undefined || this.waiting) return;
    if (this.pending.length > 0) {
      const events = this.pending;
      this.pending = [];
      let more: boolean;
      try {
        more = this.reader.onEvents(events);
      } catch (error) {
        this.readerFailed(error);
        return;
      }
      if (!more) {
        this.waiting = true;
        clearTimeout(this.clock);
        if (!this.responseDone) this.controller?.pause();
        return;
      }
    }
    if (this.ended && !this.endHandedOver) {
      this.endHandedOver = true;
      this.stopListening();
      this.reader.onEnd();
    }
  }

  private end(): void {
    this.ended = true;
    clearTimeout(this.clock);
    this.deliver();
  }

  /** Rejects the call before the first event; after it, ends the events with `stream-failed`. */
  private fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.clock);
    const failure = this.failureOf(error);
    // Closes the connection: the rest of a failed stream is of no use.
    if (!this.responseDone) this.controller?.abort(failure);
    if (!this.callSettled && this.pending.length === 0) {
      this.callSettled = true;
      this.stopListening();
      this.reject(failure);
      return;
    }
    this.options.frames.beforeFailure?.(this.pending);
    const detail = failure.detail();
    this.pending.push({ type: 'stream-failed', message: failure.message, ...(detail !== null ? { logDetail: detail } : {}) });
    this.deliver();
  }

  /**
   * The reader threw on events it was handed (a frame it could not take): the stream fails
   * from there, as it does for a frame the adapter could not read, and the reader still gets
   * its end. Never an exception out of an undici callback or a 'drain' listener, which would
   * end the process.
   */
  private readerFailed(error: unknown): void {
    if (!this.ended) {
      this.fail(
        new GatewayError('provider_error', 'The gateway could not relay a frame of the model provider\'s stream. Try again later.', {
          logDetail: { provider: this.request.provider, reason: 'stream frame not relayed', error: error instanceof Error ? error.message : String(error) },
        }),
      );
      return;
    }
    if (this.endHandedOver) return;
    this.endHandedOver = true;
    this.stopListening();
    this.reader?.onEnd();
  }

  private failureOf(error: unknown): GatewayError {
    if (error instanceof GatewayError) return error;
    const failure = transportError(error, this.request.provider, this.request.signal);
    if (!this.callSettled || failure.code !== 'provider_error' || this.request.signal.aborted) return failure;
    // "Could not be reached" would be wrong once frames arrived.
    return new GatewayError('provider_error', 'The connection to the model provider failed during the stream. Try again later.', {
      ...(failure.logDetail !== undefined ? { logDetail: failure.logDetail } : {}),
      ...(failure.upstream !== undefined ? { upstream: failure.upstream } : {}),
    });
  }
}

/** Starts a streamed call; resolves once its first event was read (see SseStream). */
export function startSseStream<D, M = EventSourceMessage>(
  http: UpstreamHttpOptions,
  request: UpstreamRequest,
  options: SseStreamOptions<StreamEvent<D>, M>,
): Promise<EventStream<StreamEvent<D>>> {
  return new Promise((resolve, reject) => {
    dispatchUpstream(http, request, new SseStream<D, M>(http, request, options, resolve, reject));
  });
}
