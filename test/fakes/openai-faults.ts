/**
 * An OpenAI-compatible upstream that fails on cue, for the routing fault matrix: each request
 * takes the next fault scripted for its model (then answers normally). Bodies and framing
 * follow OpenAI's API reference: `chat.completion` JSON, `chat.completion.chunk` SSE frames
 * ending with `data: [DONE]`, embeddings lists, and `{"error": {…}}` bodies.
 */
import type { ServerResponse } from 'node:http';
import { holdResponse, startFakeServer, writeSse, type FakeServer, type RecordedRequest } from './fake-server.js';
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

/** The answer's text: the upstream that gave it, so a test sees which deployment served. */
function answerOf(request: RecordedRequest, name: string): { streaming: boolean; model: string; body: string; first: string; rest: string[] } {
  const model = String(request.json?.model);
  if (request.path.startsWith('/v1/embeddings')) return { streaming: false, model, body: embeddings(model), first: '', rest: [] };
  const text = `served by ${name}`;
  const streaming = request.json?.stream === true;
  return {
    streaming,
    model,
    body: completion(model, text),
    first: chunk(model, { role: 'assistant', content: '' }, null),
    rest: [chunk(model, { content: text }, null), chunk(model, {}, 'stop'), '[DONE]'],
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
      if (head !== undefined) response.write(head);
      else writeSse(response, reply.first);
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
  for (const frame of [reply.first, ...reply.rest]) writeSse(response, frame);
  response.end();
}

/** An OpenAI-compatible upstream named `name` (its answers say "served by <name>"). */
export async function startFaultyOpenAI(name: string): Promise<FaultyOpenAI> {
  const server = await startFakeServer();
  const scripts = new Map<string, (Fault | Refusal)[]>();
  const handle = (request: RecordedRequest, response: ServerResponse) => answer(request, response, name, scripts.get(String(request.json?.model))?.shift());
  server.on('POST /v1/chat/completions', handle);
  server.on('POST /v1/embeddings', handle);
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
