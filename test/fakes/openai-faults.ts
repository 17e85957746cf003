/**
 * An OpenAI-compatible upstream that fails on cue, for the routing fault matrix: each request
 * takes the next fault scripted for its model (then answers normally). Bodies and framing
 * follow OpenAI's API reference: `chat.completion` JSON, `chat.completion.chunk` SSE frames
 * ending with `data: [DONE]`, the Responses API's `response` object and its `event: <type>`
 * frames (response.created … response.completed, each with its sequence_number), embeddings
 * lists, and `{"error": {…}}` bodies.
 */
import type { ServerResponse } from 'node:http';
import { holdResponse, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.js';
import { openaiErrorBody } from './openai.js';

export type Fault =
  /** 429 with `Retry-After: 1` and OpenAI's rate-limit body. */
  | 'rate-limit'
  | 'server-error-500'
  | 'unavailable-503'
  /** The connection is reset before any byte of the answer. */
  | 'connection-reset'
  /** The request is taken and never answered. */
  | 'hang-before-headers'
  /** A stream's first chunk (a JSON answer's first bytes), then nothing. */
  | 'hang-mid-stream'
  /** A stream's first chunk (a JSON answer's first bytes), then, once it could be relayed, the connection closes. */
  | 'truncated'
  /** Headers at once, the first chunk (a JSON answer) only after `SLOW_MS`. */
  | 'slow-first-token';

/** Failures of the request itself rather than of the upstream: a prompt over the context window (OpenAI's 400 `context_length_exceeded`), any other 400. */
export type Refusal = 'context-window' | 'bad-request';

export const SLOW_MS = 1_500;

export interface FaultyOpenAI {
  readonly url: string;
  readonly server: FakeServer;
  /** The next requests for `model` meet these faults, one each, in order. */
  fail(model: string, ...faults: (Fault | Refusal)[]): void;
  /** Requests received for `model` so far. */
  count(model: string): number;
  close(): Promise<void>;
}

const HEADERS = { 'x-request-id': 'req_fault', 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '499' };

function chunk(model: string, delta: Record<string, unknown>, finish: string | null): string {
  return JSON.stringify({
    id: 'chatcmpl-fault1',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_fault01',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
}

function completion(model: string, text: string): string {
  return JSON.stringify({
    id: 'chatcmpl-fault1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_fault01',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
  });
}

function embeddings(model: string): string {
  return JSON.stringify({
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5, 0.125] }],
    model,
    usage: { prompt_tokens: 2, total_tokens: 2 },
  });
}

/** A `response` object of the Responses API holding one message of `text` (none while in progress). */
function responseObject(model: string, text: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  const done = status === 'completed';
  return {
    id: 'resp_fault1',
    object: 'response',
    created_at: 1_700_000_000,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model,
    output: done ? [messageItem(text, 'completed')] : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: done ? { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 } : null,
    metadata: {},
  };
}

function messageItem(text: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  const content = status === 'completed' ? [{ type: 'output_text', annotations: [], text }] : [];
  return { id: 'msg_fault1', type: 'message', status, role: 'assistant', content };
}

/** The Responses API's events for one message of `text`, each framed `event: <type>` / `data: {…, sequence_number}`. */
function responseEvents(model: string, text: string): string[] {
  const where = { item_id: 'msg_fault1', output_index: 0, content_index: 0 };
  const events: [string, Record<string, unknown>][] = [
    ['response.created', { response: responseObject(model, '', 'in_progress') }],
    ['response.in_progress', { response: responseObject(model, '', 'in_progress') }],
    ['response.output_item.added', { output_index: 0, item: messageItem('', 'in_progress') }],
    ['response.content_part.added', { ...where, part: { type: 'output_text', annotations: [], text: '' } }],
    ['response.output_text.delta', { ...where, delta: text }],
    ['response.output_text.done', { ...where, text }],
    ['response.content_part.done', { ...where, part: { type: 'output_text', annotations: [], text } }],
    ['response.output_item.done', { output_index: 0, item: messageItem(text, 'completed') }],
    ['response.completed', { response: responseObject(model, text, 'completed') }],
  ];
  return events.map(([type, members], sequence) => `event: ${type}\ndata: ${JSON.stringify({ type, ...members, sequence_number: sequence })}\n\n`);
}

interface Answer {
  streaming: boolean;
  model: string;
  body: string;
  /** A stream's first frame and the rest, each framed as sent. */
  first: string;
  rest: string[];
}

const dataFrame = (data: string) => `data: ${data}\n\n`;

/** The answer's text: the upstream that gave it, so a test sees which deployment served. */
function answerOf(request: RecordedRequest, name: string): Answer {
  const model = String(request.json?.model);
  if (request.path.startsWith('/v1/embeddings')) return { streaming: false, model, body: embeddings(model), first: '', rest: [] };
  const text = `served by ${name}`;
  const streaming = request.json?.stream === true;
  if (request.path.startsWith('/v1/responses')) {
    const [first, ...rest] = responseEvents(model, text);
    return { streaming, model, body: JSON.stringify(responseObject(model, text, 'completed')), first: first!, rest };
  }
  return {
    streaming,
    model,
    body: completion(model, text),
    first: dataFrame(chunk(model, { role: 'assistant', content: '' }, null)),
    rest: [chunk(model, { content: text }, null), chunk(model, {}, 'stop'), '[DONE]'].map(dataFrame),
  };
}

function errorAnswer(response: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...HEADERS, ...headers });
  response.end(JSON.stringify(status === 503 ? { error: { message: 'The engine is currently overloaded.', type: 'server_error', param: null, code: null } } : openaiErrorBody(status, 'fault')));
}

function startAnswer(response: ServerResponse, streaming: boolean): void {
  response.writeHead(200, { 'content-type': streaming ? 'text/event-stream; charset=utf-8' : 'application/json', ...HEADERS });
  response.flushHeaders();
}

async function answer(request: RecordedRequest, response: ServerResponse, name: string, fault: Fault | Refusal | undefined): Promise<void> {
  const reply = answerOf(request, name);
  const head = reply.streaming ? undefined : reply.body.slice(0, 20);
  switch (fault) {
    case 'rate-limit':
      return errorAnswer(response, 429, { 'retry-after': '1' });
    case 'server-error-500':
      return errorAnswer(response, 500);
    case 'bad-request':
      return errorAnswer(response, 400);
    case 'context-window':
      response.writeHead(400, { 'content-type': 'application/json', ...HEADERS });
      response.end(
        JSON.stringify({
          error: {
            message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        }),
      );
      return;
    case 'unavailable-503':
      return errorAnswer(response, 503);
    case 'connection-reset':
      response.socket?.resetAndDestroy();
      return;
    case 'hang-before-headers':
      await holdResponse(response, 60_000);
      return;
    case 'hang-mid-stream':
    case 'truncated':
      startAnswer(response, reply.streaming);
      response.write(head ?? reply.first);
      // The first frame has time to reach the gateway's client before the cut.
      if (!(await holdResponse(response, fault === 'truncated' ? 150 : 60_000))) return;
      response.socket?.destroy();
      return;
    case 'slow-first-token':
      startAnswer(response, reply.streaming);
      if (!(await holdResponse(response, SLOW_MS))) return;
      break;
    case undefined:
      startAnswer(response, reply.streaming);
  }
  if (!reply.streaming) return void response.end(reply.body);
  for (const frame of [reply.first, ...reply.rest]) response.write(frame);
  response.end();
}

/** An OpenAI-compatible upstream named `name` (its answers say "served by <name>"). */
export async function startFaultyOpenAI(name: string): Promise<FaultyOpenAI> {
  const server = await startFakeServer();
  const scripts = new Map<string, (Fault | Refusal)[]>();
  const handle = (request: RecordedRequest, response: ServerResponse) => answer(request, response, name, scripts.get(String(request.json?.model))?.shift());
  server.on('POST /v1/chat/completions', handle);
  server.on('POST /v1/embeddings', handle);
  server.on('POST /v1/responses', handle);
  return {
    url: `${server.url}/v1`,
    server,
    fail(model, ...faults) {
      scripts.set(model, [...(scripts.get(model) ?? []), ...faults]);
    },
    count: (model) => server.requests.filter((request) => request.json?.model === model).length,
    close: () => server.close(),
  };
}
