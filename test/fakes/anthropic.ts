import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { holdResponse, startFakeServer, writeSse, type FakeServer, type RecordedRequest } from './fake-server.js';
import type { ChatScript, ConformanceFake, ScriptedUsage, UpstreamChatView } from '../providers/conformance.js';
import { agentTurn, messagesTurnView } from './agent-turns.js';

/*
 * A fake of Anthropic's Messages API (POST /v1/messages, anthropic-version 2023-06-01) as its
 * API reference documents it: the message object, the SSE event sequence with `event:` lines
 * (message_start, content_block_start, ping, content_block_delta, content_block_stop,
 * message_delta, message_stop, and `event: error` inside a 200 stream), and the error body
 * `{"type":"error","error":{"type","message"},"request_id"}` with its statuses. Like the real
 * API it checks the x-api-key and anthropic-version headers, that max_tokens is present and
 * that roles alternate, so a request the real API would refuse fails here too.
 */

export const FAKE_ANTHROPIC_KEY = 'fake-anthropic-test-key-not-a-real-credential';

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** HTTP status of each error type, per Anthropic's errors page. */
export const ERROR_STATUS: Record<AnthropicErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  /** Extended thinking: streamed as thinking_delta pieces, then one signature_delta before the block stops. */
  | { type: 'thinking'; thinking: string; signature: string };

export interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  /** The cache writes by entry lifetime, as the Messages API reports them. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export interface MessageBody {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';
  stop_sequence: string | null;
  usage: Usage;
}

/** Any field of a message, usage counts one by one. */
export type MessageOverrides = Partial<Omit<MessageBody, 'usage'>> & { usage?: Partial<Usage> };

/** Request JSON as received: the fake reads it loosely, as the real API's parser does. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/** One SSE frame: the `event:` name and the JSON `data:`. */
export type StreamFrame = [event: string, data: unknown];

export type AnthropicReply =
  /** A message; a streamed request gets it as the documented event sequence. */
  | { message: MessageOverrides }
  /**
   * These frames in a 200 stream, then: `complete` ends the response, `drop` cuts the
   * connection (a truncated stream), `hang` keeps it open until the client goes away.
   */
  | { stream: StreamFrame[]; end?: 'complete' | 'drop' | 'hang'; onClose?: () => void }
  | { error: AnthropicErrorType; message?: string; retryAfter?: number }
  /** No response headers for this long (or until the client gives up), then the default message. */
  | { delayMs: number }
  /** A 200 JSON response whose body is not a message: a broken upstream. */
  | { malformedBody: string }
  /** The reply this function picks for each request (one fake serving many scripted conversations). */
  | { respond: (request: RecordedRequest) => AnthropicReply };

export interface FakeAnthropic {
  readonly server: FakeServer;
  /** Base URL as the gateway takes it (ANTHROPIC_BASE_URL, without /v1). */
  readonly url: string;
  /** Every request received. */
  readonly requests: RecordedRequest[];
  /** Answers the next calls with this reply (until set again); default: a short text message. */
  reply(reply: AnthropicReply): void;
  /** The last request's JSON body. */
  lastBody(): Loose;
  close(): Promise<void>;
}

export function anthropicId(prefix: 'msg' | 'toolu' | 'req'): string {
  return `${prefix}_01${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** A message object as the API returns it; every field can be overridden. */
export function messageBody(overrides: MessageOverrides = {}): MessageBody {
  return {
    id: anthropicId('msg'),
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9, ...overrides.usage },
    ...withoutUsage(overrides),
  };
}

function withoutUsage(overrides: MessageOverrides): Partial<MessageBody> {
  const { usage: _usage, ...rest } = overrides;
  return rest;
}

export function errorBody(type: AnthropicErrorType, message: string): unknown {
  return { type: 'error', error: { type, message }, request_id: anthropicId('req') };
}

/** The documented overloaded error event, as sent inside an HTTP 200 stream. */
export const OVERLOADED_FRAME: StreamFrame = ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }];

/**
 * The event sequence the API streams for a message: message_start (empty content, input
 * usage, output_tokens 1), each block's start / deltas / stop (a ping after the first
 * start), then message_delta with the stop reason and the cumulative output_tokens, and
 * message_stop. Text and tool input arrive in several deltas.
 */
export function streamFramesOf(message: MessageBody, textPieces: (text: string) => string[] = splitInPieces): StreamFrame[] {
  const frames: StreamFrame[] = [
    ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } } }],
  ];
  message.content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : block.type === 'thinking' ? { type: 'thinking', thinking: '' } : { ...block, input: {} };
    frames.push(['content_block_start', { type: 'content_block_start', index, content_block: start }]);
    if (index === 0) frames.push(['ping', { type: 'ping' }]);
    const deltas =
      block.type === 'text'
        ? textPieces(block.text).map((text) => ({ type: 'text_delta', text }))
        : block.type === 'thinking'
          ? [...textPieces(block.thinking).map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: block.signature }]
          : toolInputPieces(block.input).map((partial_json) => ({ type: 'input_json_delta', partial_json }));
    for (const delta of deltas) frames.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    frames.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  frames.push(['message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: { output_tokens: message.usage.output_tokens } }]);
  frames.push(['message_stop', { type: 'message_stop' }]);
  return frames;
}

/** The frames up to the first block's content_block_stop: content sent, the message not finished. */
export function framesBeforeBlockStop(frames: StreamFrame[]): StreamFrame[] {
  return frames.slice(0, frames.findIndex(([event]) => event === 'content_block_stop'));
}

/**
 * A tool's input as input_json_delta pieces: an empty first piece, then the JSON in parts.
 * A tool called without arguments streams only the empty piece, never "{}" (the real API
 * does so; its own SDKs read an empty buffer as {}).
 */
function toolInputPieces(input: Record<string, unknown>): string[] {
  return Object.keys(input).length === 0 ? [''] : ['', ...splitInPieces(JSON.stringify(input))];
}

function splitInPieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

export async function startFakeAnthropic(options: { apiKey?: string } = {}): Promise<FakeAnthropic> {
  const server = await startFakeServer();
  const apiKey = options.apiKey ?? FAKE_ANTHROPIC_KEY;
  let current: AnthropicReply = { message: {} };
  server.on('POST /v1/messages', (request, response) => {
    const refusal = validate(request, apiKey);
    if (refusal !== null) return sendError(response, refusal.type, refusal.message);
    return answer(current, request, response);
  });
  // Token counting (POST /v1/messages/count_tokens): `{"input_tokens": N}`, here one token per
  // four characters of the messages, system and tools as sent (the real count is the model's).
  server.on('POST /v1/messages/count_tokens', (request, response) => {
    const refusal = credentialRefusal(request, apiKey);
    if (refusal !== null) return sendError(response, refusal.type, refusal.message);
    if (!Array.isArray(request.json?.messages)) return sendError(response, 'invalid_request_error', 'messages: Field required');
    response.writeHead(200, { 'content-type': 'application/json', 'request-id': anthropicId('req') });
    response.end(JSON.stringify({ input_tokens: fakeTokenCount(request.json) }));
  });
  return {
    server,
    url: server.url,
    requests: server.requests,
    reply(reply) {
      current = reply;
    },
    lastBody: () => server.requests.at(-1)?.json,
    close: () => server.close(),
  };
}

async function answer(reply: AnthropicReply, request: RecordedRequest, response: ServerResponse): Promise<void> {
  if ('respond' in reply) return answer(reply.respond(request), request, response);
  if ('delayMs' in reply) {
    if (!(await holdResponse(response, reply.delayMs))) return;
    return answer({ message: {} }, request, response);
  }
  if ('malformedBody' in reply) {
    response.writeHead(200, { 'content-type': 'application/json' });
    return void response.end(reply.malformedBody);
  }
  if ('error' in reply) return sendError(response, reply.error, reply.message ?? defaultErrorMessage(reply.error), reply.retryAfter);
  if ('message' in reply) {
    const message = messageBody({ model: request.json.model, ...reply.message });
    if (request.json.stream === true) return sendStream(response, { stream: streamFramesOf(message) });
    response.writeHead(200, { 'content-type': 'application/json', 'request-id': anthropicId('req') });
    response.end(JSON.stringify(message));
    return;
  }
  return sendStream(response, reply);
}

async function sendStream(response: ServerResponse, reply: Extract<AnthropicReply, { stream: StreamFrame[] }>): Promise<void> {
  if (reply.onClose !== undefined) response.on('close', reply.onClose);
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': anthropicId('req') });
  for (const [event, data] of reply.stream) writeSse(response, JSON.stringify(data), event);
  if (reply.end === 'hang') return new Promise<void>((resolve) => response.on('close', resolve));
  if (reply.end !== 'drop') return void response.end();
  // A truncated stream: once the frames are flushed, the connection drops mid-body.
  await new Promise<void>((resolve) => response.write('', () => resolve()));
  response.destroy();
}

function sendError(response: ServerResponse, type: AnthropicErrorType, message: string, retryAfter?: number): void {
  response.writeHead(ERROR_STATUS[type], {
    'content-type': 'application/json',
    'request-id': anthropicId('req'),
    ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}),
  });
  response.end(JSON.stringify(errorBody(type, message)));
}

function defaultErrorMessage(type: AnthropicErrorType): string {
  const messages: Record<AnthropicErrorType, string> = {
    invalid_request_error: 'messages: at least one message is required',
    authentication_error: 'invalid x-api-key',
    billing_error: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
    permission_error: 'Your API key does not have permission to use the specified resource.',
    not_found_error: 'model: claude-unknown',
    request_too_large: 'Request exceeds the maximum allowed number of bytes.',
    rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
    api_error: 'Internal server error',
    timeout_error: 'Request timed out while processing.',
    overloaded_error: 'Overloaded',
  };
  return messages[type];
}

/** A coding agent's turn (agent-turns.ts) as a message: text, or a tool_use block that stops the turn. */
export const AGENT_TURNS: AnthropicReply = {
  respond(request) {
    const turn = agentTurn(messagesTurnView(request.json));
    if (turn.kind === 'text') return { message: { content: [{ type: 'text', text: turn.text }] } };
    return { message: { content: [{ type: 'tool_use', id: anthropicId('toolu'), name: turn.name, input: turn.arguments }], stop_reason: 'tool_use' } };
  },
};

/** The fake's count_tokens answer for a request body. */
export function fakeTokenCount(body: Loose): number {
  return Math.ceil(JSON.stringify([body.system ?? null, body.messages, body.tools ?? null]).length / 4);
}

type Refusal = { type: AnthropicErrorType; message: string } | null;

/** The credential and version headers every endpoint checks first. */
function credentialRefusal(request: RecordedRequest, apiKey: string): Refusal {
  const key = request.headers['x-api-key'];
  if (key === undefined) return { type: 'authentication_error', message: 'x-api-key header is required' };
  if (key !== apiKey) return { type: 'authentication_error', message: 'invalid x-api-key' };
  if (request.headers['anthropic-version'] === undefined) return { type: 'invalid_request_error', message: 'anthropic-version: header is required' };
  return null;
}

/** The checks the real API makes before generating, with its error messages. */
function validate(request: RecordedRequest, apiKey: string): Refusal {
  const refusal = credentialRefusal(request, apiKey);
  if (refusal !== null) return refusal;
  const body = request.json;
  if (body === undefined || typeof body !== 'object') return { type: 'invalid_request_error', message: 'There was an issue with the format or content of your request.' };
  if (typeof body.model !== 'string') return { type: 'invalid_request_error', message: 'model: Field required' };
  if (typeof body.max_tokens !== 'number') return { type: 'invalid_request_error', message: 'max_tokens: Field required' };
  if (!Array.isArray(body.messages)) return { type: 'invalid_request_error', message: 'messages: Field required' };
  for (const sequence of (body.stop_sequences ?? []) as string[]) {
    if (sequence === '') return { type: 'invalid_request_error', message: 'stop_sequences: each stop sequence must be non-empty' };
    if (sequence.trim() === '') return { type: 'invalid_request_error', message: 'stop_sequences: each stop sequence must contain non-whitespace' };
  }
  // With this beta (Claude Code sends it) a `system` message may stand between the turns.
  const systemTurns = String(request.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim()).includes(MID_CONVERSATION_SYSTEM_BETA);
  const turns = (body.messages as { role: string }[]).filter((message) => !(systemTurns && message.role === 'system'));
  for (const [index, message] of (body.messages as { role: string; content: unknown }[]).entries()) {
    if (systemTurns && message.role === 'system') continue;
    if (message.role !== 'user' && message.role !== 'assistant') {
      return { type: 'invalid_request_error', message: `messages.${index}.role: Input should be 'user' or 'assistant'` };
    }
    const turn = turns.indexOf(message);
    if (turn > 0 && turns[turn - 1]!.role === message.role) {
      return { type: 'invalid_request_error', message: `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row` };
    }
    if (Array.isArray(message.content) && message.content.some((block: Loose) => block.type === 'text' && block.text === '')) {
      return { type: 'invalid_request_error', message: `messages: text content blocks must be non-empty` };
    }
    for (const [blockIndex, block] of (Array.isArray(message.content) ? (message.content as Loose[]) : []).entries()) {
      const problem = block.type === 'image' && block.source?.type === 'base64' ? imageProblem(block.source) : null;
      if (problem !== null) return { type: 'invalid_request_error', message: `messages.${index}.content.${blockIndex}.image.source.${problem}` };
    }
  }
  return null;
}

/** The beta under which the Messages API takes `system` turns among the messages. */
export const MID_CONVERSATION_SYSTEM_BETA = 'mid-conversation-system-2026-04-07';

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/** The image type the bytes are, by their signature, as the real API checks it. */
function imageTypeOf(base64: string): string | null {
  const head = Buffer.from(base64.slice(0, 16), 'base64');
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (head.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

/** Anthropic's refusals of a base64 image source (the path after `image.source.`), with its wording. */
function imageProblem(source: { media_type?: string; data?: string }): string | null {
  if (!IMAGE_MEDIA_TYPES.includes(source.media_type ?? '')) {
    return `base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
  }
  const actual = imageTypeOf(source.data ?? '');
  if (actual !== null && actual !== source.media_type) {
    return `base64: The image was specified using the ${source.media_type} media type, but the image appears to be a ${actual} image`;
  }
  return null;
}

/** The fake behind the shared conformance suite: its neutral scripts in Anthropic's wire format. */
export async function startAnthropicConformanceFake(): Promise<ConformanceFake> {
  const fake = await startFakeAnthropic();
  return {
    server: fake.server,
    scriptChat: (script) => fake.reply(conformanceReply(script)),
    chatRequests: () => fake.requests.filter((request) => request.path === '/v1/messages').map(chatView),
    close: () => fake.close(),
  };
}

const CONFORMANCE_ERROR_TYPES: Record<400 | 401 | 404 | 429 | 500, AnthropicErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
};

function conformanceReply(script: ChatScript): AnthropicReply {
  const textStream = (deltas: string[], usage: ScriptedUsage = { promptTokens: 11, completionTokens: 7 }) =>
    streamFramesOf(messageBody({ content: [{ type: 'text', text: deltas.join('') }], usage: usageOf(usage) }), () => deltas);
  switch (script.kind) {
    case 'reply':
      return { message: { content: [{ type: 'text', text: script.text }], usage: usageOf(script.usage) } };
    case 'stream':
      return { stream: textStream(script.deltas, script.usage) };
    case 'error':
      return { error: CONFORMANCE_ERROR_TYPES[script.status], message: script.message, ...(script.status === 429 ? { retryAfter: 2 } : {}) };
    case 'delay-headers':
      return { delayMs: script.delayMs };
    case 'stream-truncated':
      return { stream: framesBeforeBlockStop(textStream(script.deltas)), end: 'drop' };
    case 'stream-error-event':
      return { stream: [...framesBeforeBlockStop(textStream(script.deltas)), ['error', { type: 'error', error: { type: 'overloaded_error', message: script.message } }]] };
    case 'stream-hang':
      return { stream: framesBeforeBlockStop(textStream(script.deltas)), end: 'hang', onClose: script.onClose };
  }
}

function usageOf(usage: ScriptedUsage): Usage {
  return { input_tokens: usage.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: usage.completionTokens };
}

function chatView(request: RecordedRequest): UpstreamChatView {
  const body = request.json ?? {};
  const blocks: Loose[] = (body.messages ?? []).flatMap((message: Loose) => (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content));
  const sources = (type: string, sourceType: string) => blocks.filter((block) => block.type === type && block.source?.type === sourceType).map((block) => block.source);
  const key = request.headers['x-api-key'];
  return {
    credential: Array.isArray(key) ? key[0] : key,
    text: [...(typeof body.system === 'string' ? [body.system] : []), ...blocks.filter((block) => block.type === 'text').map((block) => block.text as string)].join('\n'),
    images: sources('image', 'base64').map((source) => ({ mimeType: source.media_type, base64: source.data })),
    imageUrls: sources('image', 'url').map((source) => source.url as string),
    files: sources('document', 'base64').map((source) => ({ mimeType: source.media_type, base64: source.data })),
    streamed: body.stream === true,
  };
}
