import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import type { RequestRecord } from '../../logs/types.js';
import type { ChatStream, JsonObject, TokenUsage } from '../../providers/index.js';

export interface ChatStreamOptions {
  requestId: string;
  /** The model the caller asked for: every chunk shows it. */
  requestedModel: string;
  /** `stream_options.include_usage`: the caller sees the usage chunk only when it asked. */
  includeUsage: boolean;
  /** Fires when the client went away. */
  signal: AbortSignal;
  record: RequestRecord;
}

/** Text and finish reasons of a streamed answer, kept for the request log. */
class StreamTranscript {
  private readonly choices = new Map<number, { content: string; finishReason: unknown }>();

  add(chunk: JsonObject): void {
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices as { index?: number; delta?: { content?: unknown }; finish_reason?: unknown }[]) {
      const index = choice.index ?? 0;
      let entry = this.choices.get(index);
      if (entry === undefined) this.choices.set(index, (entry = { content: '', finishReason: null }));
      if (typeof choice.delta?.content === 'string') entry.content += choice.delta.content;
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) entry.finishReason = choice.finish_reason;
    }
  }

  payload(usage: TokenUsage | null, failed: boolean): JsonObject {
    const choices = [...this.choices].map(([index, entry]) => ({ index, content: entry.content, finish_reason: entry.finishReason }));
    return { object: 'chat.completion.stream', choices, usage, complete: !failed };
  }
}

/**
 * Writes server-sent event frames, coalescing the frames made in one turn of the event loop
 * (those of one upstream network chunk) into one write: one system call and one chunk on the
 * wire instead of one per frame. A batch goes out as soon as the current work is done
 * (process.nextTick), so the time to first byte does not change.
 */
class FrameWriter {
  private batch = '';
  private scheduled = false;
  private full = false;

  constructor(
    private readonly output: ServerResponse,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Queues a frame. Returns a promise to wait for only when the client's buffer is full, so
   * the usual frame costs no promise and no turn of the microtask queue.
   */
  write(data: string): Promise<void> | undefined {
    if (this.output.destroyed || this.signal.aborted) return undefined;
    this.batch += `data: ${data}\n\n`;
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(() => this.flush());
    }
    return this.full ? this.drained() : undefined;
  }

  private async drained(): Promise<void> {
    // A client that goes away while the buffer is full ends the wait (the loop then stops).
    await once(this.output, 'drain', { signal: this.signal }).catch(() => undefined);
    this.full = false;
  }

  end(): void {
    this.flush();
    this.output.end();
  }

  private flush(): void {
    this.scheduled = false;
    if (this.batch.length === 0 || this.output.destroyed) return;
    this.full = !this.output.write(this.batch);
    this.batch = '';
  }
}

/**
 * Sends a provider's chat stream to the client as OpenAI server-sent events. Called once the
 * provider's first frame arrived (so the 200 is committed only then). Each chunk is written
 * as soon as it comes; the stream ends with `data: [DONE]`, or with one error chunk (no
 * [DONE]) when the provider failed mid-stream: OpenAI's own API and SDKs report a mid-stream
 * failure as a `data: {"error": …}` frame, which the SDKs raise as an APIError.
 *
 * The frames go straight to the response (the reply is hijacked): Fastify's stream replies
 * pipe a stream into the response and watch both ends, which cost a fifth to a third of a streamed
 * request's CPU. Fastify's onResponse hooks still run when the response finishes or fails;
 * its onSend hooks do not: the reply's headers (request id, limits) are copied here.
 */
export function sendChatStream(reply: FastifyReply, stream: ChatStream, options: ChatStreamOptions): FastifyReply {
  reply.hijack();
  // One header object for writeHead: setting each on the response first validated and stored
  // it twice (~6 µs a stream, timed in place).
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  reply.raw.writeHead(200, headers);
  // The request log waits for the pump when the client goes away, so late usage still counts.
  options.record.pendingWork = pump(stream, reply.raw, options);
  return reply;
}

async function pump(stream: ChatStream, output: ServerResponse, options: ChatStreamOptions): Promise<void> {
  const { record, signal, requestedModel } = options;
  const transcript = new StreamTranscript();
  let template: JsonObject | null = null;
  let usageChunk: JsonObject | null = null;
  let failure: { message: string; logDetail?: Record<string, unknown> | undefined } | null = null;

  const frames = new FrameWriter(output, signal);

  try {
    for await (const event of stream.events) {
      if (signal.aborted) break;
      if (event.type === 'chunk-received') {
        event.chunk.model = requestedModel;
        template ??= event.chunk;
        transcript.add(event.chunk);
        const drained = frames.write(JSON.stringify(event.chunk));
        if (drained !== undefined) await drained;
      } else if (event.type === 'usage-reported') {
        record.usage = event.usage;
        usageChunk = event.chunk ?? null;
      } else {
        failure = event;
        break;
      }
    }
  } catch (error) {
    // The contract says events never throw after the first frame; a client abort can still surface here.
    if (!signal.aborted) failure = { message: 'The model provider stream failed.', logDetail: { reason: (error as Error).name } };
  }

  record.responsePayload = transcript.payload(record.usage, failure !== null || signal.aborted);
  if (signal.aborted) {
    record.errorCode = 'client_closed';
    output.destroy();
    return;
  }
  if (failure !== null) {
    record.errorCode = 'provider_error';
    record.logDetail = failure.logDetail ?? null;
    const error = new GatewayError('provider_error', failure.message);
    await frames.write(JSON.stringify(error.toBody(options.requestId)));
  } else {
    if (options.includeUsage && record.usage !== null) await frames.write(JSON.stringify(usageChunkOf(usageChunk, template, record.usage, requestedModel)));
    await frames.write('[DONE]');
  }
  frames.end();
}

/** The provider's own usage chunk, or one built like OpenAI's (`choices: []`). */
function usageChunkOf(own: JsonObject | null, template: JsonObject | null, usage: TokenUsage, model: string): JsonObject {
  if (own !== null) return { ...own, model };
  return {
    id: template?.id ?? null,
    object: 'chat.completion.chunk',
    created: template?.created ?? Math.floor(Date.now() / 1000),
    model,
    choices: [],
    usage: {
      prompt_tokens: usage.promptTokens,
      completion_tokens: usage.completionTokens,
      total_tokens: usage.totalTokens,
      ...(usage.cachedPromptTokens !== null ? { prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens } } : {}),
    },
  };
}
