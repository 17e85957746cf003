import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../errors/index.js';
import { memberEdits, rewriteObjectText, type MemberEdits } from '../../json/index.js';
import type { RequestRecord } from '../../logs/index.js';
import { providerJsonText, type ChatStream, type ChatStreamEvent, type ChatStreamReader, type JsonObject, type TokenUsage } from '../../providers/index.js';

export interface ChatStreamOptions {
  requestId: string;
  /** The model the caller asked for: every chunk shows it. */
  requestedModel: string;
  /** `stream_options.include_usage`: the caller sees the usage chunk only when it asked. */
  includeUsage: boolean;
  /** Fires when the client went away. */
  signal: AbortSignal;
  record: RequestRecord;
  /** Characters of answer text the request log's transcript keeps (the log stores no more). */
  transcriptCharacters: number;
}

/** The most choices a transcript follows: a request may ask for 128 (`n`); and the most tool calls it follows per choice. */
const MAX_TRANSCRIPT_CHOICES = 128;

interface TranscriptToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

interface TranscriptChoice {
  content: string;
  /** The model's refusal text (OpenAI streams it in `delta.refusal`), null when it did not refuse. */
  refusal: string | null;
  finishReason: unknown;
  toolCalls: Map<number, TranscriptToolCall> | null;
}

/** A tool call's part in one chunk's delta (OpenAI sends id, type and name first, then argument pieces). */
interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  type?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

/**
 * Text, refusals, tool calls and finish reasons of a streamed answer, kept for the request log. Bounded:
 * a stream may go on far longer than the log stores (260 MB of deltas held 470 MB of heap), so
 * text past `characters` is counted, not kept.
 */
class StreamTranscript {
  private readonly choices = new Map<number, TranscriptChoice>();
  private room: number;
  private notKept = 0;

  constructor(characters: number) {
    this.room = characters;
  }

  add(chunk: JsonObject): void {
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices as ({ index?: unknown; delta?: { content?: unknown; refusal?: unknown; tool_calls?: unknown } | null; finish_reason?: unknown } | null)[]) {
      if (typeof choice !== 'object' || choice === null) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const content = choice.delta?.content;
      const refusal = choice.delta?.refusal;
      const toolCalls = choice.delta?.tool_calls;
      let entry = this.choices.get(index);
      if (entry === undefined) {
        if (this.choices.size >= MAX_TRANSCRIPT_CHOICES) {
          if (typeof content === 'string') this.notKept += content.length;
          continue;
        }
        this.choices.set(index, (entry = { content: '', refusal: null, finishReason: null, toolCalls: null }));
      }
      if (typeof content === 'string') entry.content += this.kept(content);
      if (typeof refusal === 'string' && refusal.length > 0) entry.refusal = (entry.refusal ?? '') + this.kept(refusal);
      if (Array.isArray(toolCalls)) this.addToolCalls(entry, toolCalls as (ToolCallDelta | null)[]);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) entry.finishReason = choice.finish_reason;
    }
  }

  private addToolCalls(entry: TranscriptChoice, deltas: (ToolCallDelta | null)[]): void {
    entry.toolCalls ??= new Map();
    for (const delta of deltas) {
      if (typeof delta !== 'object' || delta === null) continue;
      const index = typeof delta.index === 'number' ? delta.index : 0;
      let call = entry.toolCalls.get(index);
      if (call === undefined) {
        if (entry.toolCalls.size >= MAX_TRANSCRIPT_CHOICES) continue;
        entry.toolCalls.set(index, (call = { id: '', type: 'function', function: { name: '', arguments: '' } }));
      }
      if (typeof delta.id === 'string') call.id += this.kept(delta.id);
      if (typeof delta.type === 'string') call.type = delta.type;
      const name = delta.function?.name;
      const pieces = delta.function?.arguments;
      if (typeof name === 'string') call.function.name += this.kept(name);
      if (typeof pieces === 'string') call.function.arguments += this.kept(pieces);
    }
  }

  /** What of `text` fits the room left; the rest is counted. */
  private kept(text: string): string {
    if (text.length <= this.room) {
      this.room -= text.length;
      return text;
    }
    const kept = text.slice(0, this.room);
    this.notKept += text.length - this.room;
    this.room = 0;
    return kept;
  }

  payload(usage: TokenUsage | null, failed: boolean): JsonObject {
    const choices = [...this.choices].map(([index, entry]) => ({
      index,
      content: entry.content,
      ...(entry.refusal !== null ? { refusal: entry.refusal } : {}),
      ...(entry.toolCalls !== null ? { tool_calls: [...entry.toolCalls.values()] } : {}),
      finish_reason: entry.finishReason,
    }));
    return {
      object: 'chat.completion.stream',
      choices,
      usage: usage === null ? null : openAIUsage(usage),
      complete: !failed,
      ...(this.notKept > 0 ? { characters_not_kept: this.notKept } : {}),
    };
  }
}

/**
 * Sends a provider's chat stream to the client as OpenAI server-sent events. Called once the
 * provider's first frame arrived (so the 200 is committed only then). The events of each
 * upstream network chunk go out as one write, in the turn they arrived in; the stream ends
 * with `data: [DONE]`, or with one error chunk (no [DONE]) when the provider failed
 * mid-stream: OpenAI's own API and SDKs report a mid-stream failure as a `data: {"error": …}`
 * frame, which the SDKs raise as an APIError.
 *
 * The frames go straight to the response (the reply is hijacked): Fastify's stream replies
 * pipe a stream into the response and watch both ends, a large share of a streamed request's
 * CPU. Fastify's onResponse hooks still run when the response finishes or fails;
 * its onSend hooks do not: the reply's headers (request id, limits) are copied here.
 */
export function sendChatStream(reply: FastifyReply, stream: ChatStream, options: ChatStreamOptions): FastifyReply {
  reply.hijack();
  // One header object for writeHead: setting each on the response first validated and stored
  // it twice.
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  reply.raw.writeHead(200, headers);
  // The request log waits for the relay when the client goes away, so late usage still counts.
  options.record.pendingWork = new Promise<void>((finished) => stream.read(new ChatStreamRelay(stream, reply.raw, options, finished)));
  return reply;
}

/** Writes the events it is handed to the client, and ends the response and the record's stream part. */
class ChatStreamRelay implements ChatStreamReader {
  private readonly transcript: StreamTranscript;
  private template: JsonObject | null = null;
  private usageChunk: JsonObject | null = null;
  private failure: { message: string; logDetail?: Record<string, unknown> | undefined } | null = null;
  private readonly chunkEdits: MemberEdits;

  constructor(
    private readonly stream: ChatStream,
    private readonly output: ServerResponse,
    private readonly options: ChatStreamOptions,
    private readonly finished: () => void,
  ) {
    this.chunkEdits = memberEdits({ model: options.requestedModel }, ['usage']);
    this.transcript = new StreamTranscript(options.transcriptCharacters);
  }

  onEvents(events: readonly ChatStreamEvent[]): boolean {
    const { record } = this.options;
    if (this.gone() || this.failure !== null) return true;
    let frames = '';
    for (const event of events) {
      if (event.type === 'chunk-received') {
        this.template ??= event.chunk;
        this.transcript.add(event.chunk);
        frames += frameOf(this.shownChunk(event));
      } else if (event.type === 'usage-reported') {
        record.usage = event.usage;
        this.usageChunk = event.chunk ?? null;
      } else {
        this.failure = event;
        break;
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
    const { record } = this.options;
    const aborted = this.options.signal.aborted;
    record.responsePayload = this.transcript.payload(record.usage, this.failure !== null || aborted);
    if (this.gone()) {
      if (aborted) record.errorCode = 'client_closed';
      this.output.destroy();
    } else if (this.failure !== null) {
      record.errorCode = 'provider_error';
      record.logDetail = this.failure.logDetail ?? null;
      this.output.end(frameOf(JSON.stringify(new GatewayError('provider_error', this.failure.message).toBody(this.options.requestId))));
    } else {
      const usage = this.options.includeUsage && record.usage !== null ? frameOf(this.usageChunkJson(record.usage)) : '';
      this.output.end(`${usage}${frameOf('[DONE]')}`);
    }
    this.finished();
  }

  /**
   * The usage chunk: the provider's own with the caller's model, or one built like OpenAI's
   * when there is none, or when the provider's cannot be written again (nested too deep:
   * the stream would never end).
   */
  private usageChunkJson(usage: TokenUsage): string {
    const own = this.usageChunk === null ? null : providerJsonText({ ...this.usageChunk, model: this.options.requestedModel });
    return own ?? JSON.stringify(builtUsageChunk(this.template, usage, this.options.requestedModel));
  }

  /**
   * A chunk's JSON as the caller sees it: the model it asked for, no `usage`. The provider's
   * own text with those members changed when it has one (cheaper than serialising it again),
   * else the object serialised. A line break would end the server-sent event early: such text
   * (the parser joins multi-line data with one) is never sent as it is.
   */
  private shownChunk(event: { chunk: JsonObject; json?: string | undefined }): string {
    if (event.json !== undefined && !event.json.includes('\n') && !event.json.includes('\r')) {
      const text = rewriteObjectText(event.json, this.chunkEdits);
      if (text !== undefined) return text;
    }
    event.chunk.model = this.options.requestedModel;
    delete event.chunk.usage;
    return JSON.stringify(event.chunk);
  }

  private gone(): boolean {
    return this.options.signal.aborted || this.output.destroyed;
  }
}

function frameOf(data: string): string {
  return `data: ${data}\n\n`;
}

/** A usage chunk built like OpenAI's (`choices: []`), with the stream's id and time when the provider's are a string and a number. */
function builtUsageChunk(template: JsonObject | null, usage: TokenUsage, model: string): JsonObject {
  return {
    id: typeof template?.id === 'string' ? template.id : null,
    object: 'chat.completion.chunk',
    created: typeof template?.created === 'number' ? template.created : Math.floor(Date.now() / 1000),
    model,
    choices: [],
    usage: openAIUsage(usage),
  };
}

/** Usage in OpenAI's words (snake_case), as chunks carry it and as the request log keeps it. */
function openAIUsage(usage: TokenUsage): JsonObject {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    ...(usage.cachedPromptTokens !== null ? { prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens } } : {}),
  };
}
