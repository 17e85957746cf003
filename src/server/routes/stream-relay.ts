import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import type { StreamEncoder } from '../../formats/index.js';
import type { RequestCall } from '../../calls/index.js';
import type { EventStream, StreamEvent, StreamFailed, StreamReader, TokenUsage, UsageReported } from '../../model-api/index.js';

export interface StreamRelayOptions {
  requestId: string;
  /** Fires when the client went away. */
  signal: AbortSignal;
  /** The request's call: told the stream's usage, its transcript and how it ended. */
  call: RequestCall;
}

/**
 * Sends a provider's stream to the client as server-sent events, in the frames of the
 * caller's format (its stream encoder). Called once the provider's first frame arrived (so
 * the 200 is committed only then). The frames of each upstream network chunk go out as one
 * write, in the turn they arrived in; the encoder ends the stream, or writes its format's
 * error frame when the provider failed mid-stream.
 *
 * The frames go straight to the response (the reply is hijacked): Fastify's stream replies
 * pipe a stream into the response and watch both ends, a large share of a streamed request's
 * CPU. Fastify's onResponse hooks still run when the response finishes or fails;
 * its onSend hooks do not: the reply's headers (request id, limits) are copied here.
 */
export function sendEventStream<D extends { type: string }>(
  reply: FastifyReply,
  stream: EventStream<StreamEvent<D>>,
  encoder: StreamEncoder<D>,
  options: StreamRelayOptions,
): FastifyReply {
  openEventStream(reply, options.call);
  // The request log waits for the relay when the client goes away, so late usage still counts.
  options.call.pending(new Promise<void>((finished) => stream.read(new StreamRelay(stream, encoder, reply.raw, options, finished))));
  return reply;
}

/** Takes the response over for server-sent events: a 200 with the reply's headers (request id, limits, guardrails). */
export function openEventStream(reply: FastifyReply, call: RequestCall): void {
  reply.hijack();
  // One header object for writeHead: setting each on the response first validated and stored
  // it twice.
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  // The input stage's verdicts; the answer's are in the request record (the header is sent before it).
  const guardrails = call.guardrailsHeader;
  if (guardrails !== null) headers['x-modelgate-guardrails'] = guardrails;
  reply.raw.writeHead(200, headers);
}

/** Writes the frames of the events it is handed to the client, and ends the response and the record's stream part. */
class StreamRelay<D extends { type: string }> implements StreamReader<StreamEvent<D>> {
  private failure: StreamFailed | null = null;
  /** The last usage the provider reported (its running total). */
  private usage: TokenUsage | null = null;

  constructor(
    private readonly stream: EventStream<StreamEvent<D>>,
    private readonly encoder: StreamEncoder<D>,
    private readonly output: ServerResponse,
    private readonly options: StreamRelayOptions,
    private readonly finished: () => void,
  ) {}

  onEvents(events: readonly StreamEvent<D>[]): boolean {
    if (this.gone() || this.failure !== null) return true;
    let frames = '';
    for (const event of events) {
      if (isUsage(event)) {
        this.usage = event.usage;
        this.options.call.used(event.usage);
        frames += this.encoder.usage(event);
      } else if (isFailure(event)) {
        this.failure = event;
        break;
      } else {
        frames += this.encoder.encode(event);
      }
    }
    if (frames.length === 0 || this.output.write(frames)) return true;
    // The client's buffer is full: the provider waits until it drained. A client that goes
    // away instead aborts the upstream call, which ends the stream. One that stays but takes
    // nothing (undici's idle timeout does not run while the connection is paused) has its
    // connection closed by the stalled-client watch, which aborts the call the same way.
    this.output.once('drain', () => this.stream.resume());
    return false;
  }

  onEnd(): void {
    const { call } = this.options;
    const aborted = this.options.signal.aborted;
    call.answered({ payload: this.encoder.transcript(this.usage, this.failure === null && !aborted) });
    if (this.gone()) {
      this.output.destroy();
    } else if (this.failure !== null) {
      // A failure of the gateway's own (a guardrail blocked the answer) is sent as it is.
      const own = this.failure.error instanceof GatewayError ? this.failure.error : null;
      if (own === null) call.streamFailed(this.failure.logDetail);
      else call.failed(own);
      this.output.end(this.encoder.fail(own ?? new GatewayError('provider_error', this.failure.message), this.options.requestId));
    } else {
      const frames = this.encoder.end(this.usage);
      if (typeof frames !== 'string') {
        // The format keeps its answer before the caller sees the end (a stored response).
        void frames.then((last) => this.output.end(last), () => this.output.destroy()).finally(this.finished);
        return;
      }
      this.output.end(frames);
    }
    this.finished();
  }

  private gone(): boolean {
    return this.options.signal.aborted || this.output.destroyed;
  }
}

function isUsage(event: { type: string }): event is UsageReported {
  return event.type === 'usage-reported';
}

function isFailure(event: { type: string }): event is StreamFailed {
  return event.type === 'stream-failed';
}
