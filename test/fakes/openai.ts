/**
 * A fake OpenAI API (and so of any OpenAI-compatible server), following OpenAI's published
 * API reference: `chat.completion` JSON, `chat.completion.chunk` SSE frames ending with
 * `data: [DONE]`, the usage-only chunk (`choices: []`) of `stream_options.include_usage`,
 * the Responses API (openai-responses.ts), embeddings lists, image data (`b64_json` / `url`),
 * speech bytes, transcription JSON/text, moderation results (`POST /v1/moderations`),
 * and error bodies `{"error": {"message", "type", "param", "code"}}` with their statuses.
 */
import type { ServerResponse } from 'node:http';
import { startFakeServer, writeSse, type FakeServer, type RecordedRequest } from './fake-server.js';
import type { ChatScript, ConformanceFake, ScriptedUsage, UpstreamChatView } from '../providers/conformance.js';
import { FakeResponses, type ResponsesScript } from './openai-responses.js';
import { agentTurn, chatTurnView } from './agent-turns.js';

/** OpenAI-only scripts on top of the conformance ones. */
export type OpenAIChatScript =
  | ChatScript
  /** This exact `chat.completion` body (tool calls, logprobs, n > 1, …). */
  | { kind: 'completion'; body: Record<string, unknown> }
  /** These exact SSE `data:` payloads, then the connection ends (malformed frames, usage on a content chunk…). */
  | { kind: 'frames'; frames: string[] }
  /** OpenAI's answer when the account is out of credit or over its spend limit: a 429 of type insufficient_quota. */
  | { kind: 'quota-exhausted' }
  /** A stream whose deltas arrive `intervalMs` apart, as a model's tokens do (whole JSON when not streamed). */
  | { kind: 'stream-paced'; deltas: string[]; intervalMs: number; usage: ScriptedUsage }
  /** An answer cut by the length limit or a content filter, whole or streamed. */
  | { kind: 'cut'; finishReason: 'length' | 'content_filter'; deltas: string[]; usage: ScriptedUsage }
  /** One function call (`finish_reason: "tool_calls"`) after optional text, whole or streamed with its arguments in pieces. */
  | { kind: 'tool-call'; id: string; name: string; arguments: string; preface?: string; usage: ScriptedUsage }
  /** One script per request, in order; the last one answers every request after it (a redraft, then its review…). */
  | { kind: 'sequence'; scripts: OpenAIChatScript[] }
  /** The script this function picks for each request (one fake serving many scripted conversations). */
  | { kind: 'per-request'; script: (request: RecordedRequest) => OpenAIChatScript };

export interface OpenAIFake extends ConformanceFake {
  scriptChat(script: OpenAIChatScript): void;
  /** What `POST /v1/responses` answers next (its own API; default: text in three pieces). */
  scriptResponses(script: ResponsesScript): void;
  /** The next request to `path` (e.g. /v1/embeddings) answers with OpenAI's error body of `status`, naming `param` when given. */
  failNext(path: string, status: 400 | 401 | 429 | 500, message: string, param?: string): void;
  /** The next request to `path` answers 200 with exactly this JSON text (spacing, spellings or errors the fake would not write). */
  answerNext(path: string, json: string): void;
}

export interface OpenAIFakeOptions {
  /** Path prefix of the API (OpenAI: /v1). */
  basePath?: string;
}

const FINGERPRINT = 'fp_fake0001';
/** OpenAI answers with the dated snapshot of the model asked for. */
const snapshotOf = (model: unknown) => `${String(model)}-2024-07-18`;
export const FAKE_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
/** Bytes the fake "speaks": an ID3 header, so the body is recognisably audio. */
export const FAKE_AUDIO = Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000fake-audio-frames', 'latin1');
export const FAKE_TRANSCRIPT = 'The quick brown fox jumped over the lazy dog.';

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** OpenAI's documented error bodies; `param` names the request field at fault (a 400's, e.g. `messages[0].content`). */
export function openaiErrorBody(status: number, message: string, param: string | null = null): { error: { message: string; type: string; param: string | null; code: string | null } } {
  switch (status) {
    case 401:
      return { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };
    case 404:
      return { error: { message, type: 'invalid_request_error', param: null, code: 'model_not_found' } };
    case 429:
      return { error: { message, type: 'requests', param: null, code: 'rate_limit_exceeded' } };
    case 500:
      return { error: { message, type: 'server_error', param: null, code: null } };
    default:
      return { error: { message, type: 'invalid_request_error', param, code: null } };
  }
}

/** `indent`: two-space indented, as the API reference shows embeddings lists (clients must accept any JSON whitespace). */
function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, indent?: number): void {
  const text = JSON.stringify(body, null, indent);
  response.writeHead(status, { 'content-type': 'application/json', 'openai-processing-ms': '12', 'x-request-id': 'req_fake', ...headers });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, message: string, param: string | null = null): void {
  sendJson(response, status, openaiErrorBody(status, message, param), status === 429 ? { 'retry-after': '2' } : {});
}

function wireUsage(usage: ScriptedUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

function completionBody(model: unknown, text: string, usage: ScriptedUsage, finishReason = 'stop', toolCall?: WireToolCall) {
  const message = toolCall === undefined
    ? { role: 'assistant', content: text, refusal: null, annotations: [] }
    : { role: 'assistant', content: text.length > 0 ? text : null, tool_calls: [{ id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: toolCall.arguments } }], refusal: null, annotations: [] };
  return {
    id: 'chatcmpl-fake123',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: snapshotOf(model),
    choices: [
      { index: 0, message, logprobs: null, finish_reason: finishReason },
    ],
    usage: wireUsage(usage),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

/** Writes `chat.completion.chunk` frames as OpenAI streams them. */
class ChunkWriter {
  constructor(
    private readonly response: ServerResponse,
    private readonly model: unknown,
    /** With include_usage every chunk carries `"usage": null`, and a usage-only chunk comes last. */
    private readonly includeUsage: boolean,
  ) {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': 'req_fake' });
  }

  private write(choices: unknown[], usage?: unknown): void {
    const chunk: Record<string, unknown> = {
      id: 'chatcmpl-fake123',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: snapshotOf(this.model),
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
      choices,
    };
    if (this.includeUsage) chunk.usage = usage ?? null;
    writeSse(this.response, JSON.stringify(chunk));
  }

  deltas(deltas: string[]): void {
    this.write([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]);
    for (const content of deltas) this.content(content);
  }

  content(content: string): void {
    this.write([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]);
  }

  /** A function call (after the text of `deltas`, if any was written): its id and name first, then its arguments in two pieces, as OpenAI streams them. */
  toolCall(call: WireToolCall, afterText: boolean): void {
    const half = Math.ceil(call.arguments.length / 2);
    const opening = afterText ? {} : { role: 'assistant', content: null, refusal: null };
    this.write([{ index: 0, delta: { ...opening, tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, logprobs: null, finish_reason: null }]);
    for (const piece of [call.arguments.slice(0, half), call.arguments.slice(half)]) this.write([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }]);
  }

  finish(usage: ScriptedUsage, finishReason = 'stop'): void {
    this.write([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]);
    if (this.includeUsage) this.write([], wireUsage(usage));
    writeSse(this.response, '[DONE]');
    this.response.end();
  }
}

/** The content part types Chat Completions takes; any other is OpenAI's 400 invalid_value naming the part. */
const CHAT_PART_TYPES = ['text', 'image_url', 'input_audio', 'refusal', 'audio', 'file'];

/** The message roles Chat Completions takes; any other is OpenAI's 400 invalid_value naming the role. */
const CHAT_ROLES = ['system', 'assistant', 'user', 'function', 'tool', 'developer'];

function supportedValues(values: readonly string[]): string {
  return `${values.slice(0, -1).map((value) => `'${value}'`).join(', ')}, and '${values.at(-1)}'`;
}

function unsupportedPart(messages: unknown): { value: string; param: string; supported: readonly string[] } | null {
  if (!Array.isArray(messages)) return null;
  for (const [index, message] of messages.entries()) {
    const role = String((message as { role?: unknown } | null)?.role);
    if (!CHAT_ROLES.includes(role)) return { value: role, param: `messages[${index}].role`, supported: CHAT_ROLES };
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const [partIndex, part] of content.entries()) {
      const type = String((part as { type?: unknown } | null)?.type);
      if (!CHAT_PART_TYPES.includes(type)) return { value: type, param: `messages[${index}].content[${partIndex}].type`, supported: CHAT_PART_TYPES };
    }
  }
  return null;
}

function chatAnswer(script: OpenAIChatScript, request: RecordedRequest, response: ServerResponse): void {
  const body = request.json as { model?: unknown; messages?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
  const unsupported = unsupportedPart(body.messages);
  if (unsupported !== null) {
    return sendJson(response, 400, {
      error: { message: `Invalid value: '${unsupported.value}'. Supported values are: ${supportedValues(unsupported.supported)}.`, type: 'invalid_request_error', param: unsupported.param, code: 'invalid_value' },
    });
  }
  const streamed = body.stream === true;
  const stream = () => new ChunkWriter(response, body.model, body.stream_options?.include_usage === true);
  switch (script.kind) {
    case 'reply':
    case 'stream': {
      const deltas = script.kind === 'reply' ? [script.text] : script.deltas;
      if (!streamed) return sendJson(response, 200, completionBody(body.model, deltas.join(''), script.usage));
      const writer = stream();
      writer.deltas(deltas);
      writer.finish(script.usage);
      return;
    }
    case 'cut': {
      if (!streamed) return sendJson(response, 200, completionBody(body.model, script.deltas.join(''), script.usage, script.finishReason));
      const writer = stream();
      writer.deltas(script.deltas);
      writer.finish(script.usage, script.finishReason);
      return;
    }
    case 'tool-call': {
      const preface = script.preface ?? '';
      if (!streamed) return sendJson(response, 200, completionBody(body.model, preface, script.usage, 'tool_calls', script));
      const writer = stream();
      if (preface.length > 0) writer.deltas([preface]);
      writer.toolCall(script, preface.length > 0);
      writer.finish(script.usage, 'tool_calls');
      return;
    }
    case 'completion':
      return sendJson(response, 200, script.body);
    case 'frames':
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': 'req_fake' });
      for (const frame of script.frames) writeSse(response, frame);
      response.end();
      return;
    case 'error':
      return sendError(response, script.status, script.message);
    case 'quota-exhausted':
      return sendJson(response, 429, {
        error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' },
      });
    case 'delay-headers': {
      const timer = setTimeout(() => {
        if (!response.destroyed) sendJson(response, 200, completionBody(body.model, 'late', { promptTokens: 1, completionTokens: 1 }));
      }, script.delayMs);
      timer.unref();
      return;
    }
    case 'stream-truncated':
      stream().deltas(script.deltas);
      response.end();
      return;
    case 'stream-error-event':
      stream().deltas(script.deltas);
      writeSse(response, JSON.stringify(openaiErrorBody(500, script.message)));
      response.end();
      return;
    case 'stream-paced': {
      if (!streamed) return sendJson(response, 200, completionBody(body.model, script.deltas.join(''), script.usage));
      const writer = stream();
      writer.deltas([]);
      const next = (index: number) => {
        if (response.destroyed) return;
        const content = script.deltas[index];
        if (content === undefined) return writer.finish(script.usage);
        writer.content(content);
        setTimeout(() => next(index + 1), script.intervalMs);
      };
      next(0);
      return;
    }
    case 'stream-hang':
      response.on('close', script.onClose);
      stream().deltas(script.deltas);
      return;
    case 'per-request':
      return chatAnswer(script.script(request), request, response);
  }
}

let agentCallCount = 0;

/** A coding agent's turn (agent-turns.ts) as a chat completion: text, or one function call. */
export const AGENT_CHAT_TURNS: OpenAIChatScript = {
  kind: 'per-request',
  script(request) {
    const turn = agentTurn(chatTurnView(request.json));
    const usage = { promptTokens: 21, completionTokens: 8 };
    if (turn.kind === 'text') return { kind: 'stream', deltas: [turn.text], usage };
    agentCallCount += 1;
    return { kind: 'tool-call', id: `call_agent${agentCallCount}`, name: turn.name, arguments: JSON.stringify(turn.arguments), usage };
  },
};

/** "data:<mime>;base64,<data>" → its parts, or null for anything else. */
function dataUri(value: unknown): { mimeType: string; base64: string } | null {
  if (typeof value !== 'string') return null;
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(value);
  return match === null ? null : { mimeType: match[1]!, base64: match[2]! };
}

interface WirePart {
  type: string;
  text?: string;
  image_url?: { url: string };
  file?: { file_data?: string };
}

/** What a chat request carried, vendor-neutral (see UpstreamChatView). */
export function viewOfChatRequest(request: RecordedRequest): UpstreamChatView {
  const body = request.json as { messages?: { content?: unknown }[]; stream?: unknown };
  const view: UpstreamChatView = {
    credential: request.headers.authorization?.replace(/^Bearer /, ''),
    text: '',
    images: [],
    imageUrls: [],
    files: [],
    streamed: body.stream === true,
  };
  const texts: string[] = [];
  for (const message of body.messages ?? []) {
    if (typeof message.content === 'string') texts.push(message.content);
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as WirePart[]) {
      if (part.type === 'text' && part.text !== undefined) texts.push(part.text);
      if (part.type === 'image_url') {
        const image = dataUri(part.image_url?.url);
        if (image !== null) view.images.push(image);
        else if (part.image_url !== undefined) view.imageUrls.push(part.image_url.url);
      }
      if (part.type === 'file') {
        const file = dataUri(part.file?.file_data);
        if (file !== null) view.files.push(file);
      }
    }
  }
  view.text = texts.join('\n');
  return view;
}

function embeddingsAnswer(request: RecordedRequest, response: ServerResponse): void {
  const body = request.json as { model: string; input: unknown; dimensions?: number; encoding_format?: string };
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const dimensions = body.dimensions ?? 4;
  const data = inputs.map((_input, index) => {
    const vector = Array.from({ length: dimensions }, (_, position) => (index + 1) * 0.001 * (position + 1));
    const embedding = body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  const tokens = inputs.reduce<number>((sum, input) => sum + String(input).split(/\s+/).length, 0);
  sendJson(response, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }, {}, 2);
}

function imagesAnswer(request: RecordedRequest, response: ServerResponse): void {
  const body = request.json as { model: string; n?: number; response_format?: string };
  const count = body.n ?? 1;
  // gpt-image models always return base64; dall-e models return URLs unless asked for b64_json.
  const base64 = body.response_format === 'b64_json' || body.model.startsWith('gpt-image');
  const data = Array.from({ length: count }, (_, index) =>
    base64 ? { b64_json: FAKE_PNG_BASE64, revised_prompt: 'A revised prompt.' } : { url: `https://images.example/generated-${index}.png`, revised_prompt: 'A revised prompt.' },
  );
  const usage = body.model.startsWith('gpt-image')
    ? { input_tokens: 9, output_tokens: 272 * count, total_tokens: 9 + 272 * count, input_tokens_details: { text_tokens: 9, image_tokens: 0 } }
    : undefined;
  sendJson(response, 200, { created: 1_700_000_000, data, ...(usage !== undefined ? { usage } : {}) });
}

function speechAnswer(request: RecordedRequest, response: ServerResponse): void {
  const format = (request.json as { response_format?: string }).response_format ?? 'mp3';
  response.writeHead(200, { 'content-type': SPEECH_TYPES[format] ?? 'application/octet-stream', 'transfer-encoding': 'chunked' });
  response.end(FAKE_AUDIO);
}

/** The fields of a multipart/form-data body (a repeated field gives an array) and its files. */
export function formFields(request: RecordedRequest): { fields: Record<string, string | string[]>; files: { name: string; filename: string; contentType: string; bytes: Buffer }[] } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(String(request.headers['content-type']));
  const fields: Record<string, string | string[]> = {};
  const files: { name: string; filename: string; contentType: string; bytes: Buffer }[] = [];
  if (boundary === null) return { fields, files };
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  const raw = request.rawBody.toString('latin1');
  for (const section of raw.split(delimiter).slice(1, -1)) {
    const headerEnd = section.indexOf('\r\n\r\n');
    const headers = section.slice(0, headerEnd);
    const content = section.slice(headerEnd + 4, -2);
    const name = /name="([^"]*)"/.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(headers)?.[1];
    const value = Buffer.from(content, 'latin1').toString('utf8');
    const existing = fields[name];
    if (filename === undefined) fields[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    else files.push({ name, filename, contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? '', bytes: Buffer.from(content, 'latin1') });
  }
  return { fields, files };
}

function transcriptionAnswer(request: RecordedRequest, response: ServerResponse): void {
  const { fields } = formFields(request);
  const format = String(fields.response_format ?? 'json');
  if (format === 'text' || format === 'srt' || format === 'vtt') {
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    response.end(`${FAKE_TRANSCRIPT}\n`);
    return;
  }
  if (format === 'verbose_json') {
    sendJson(response, 200, { task: 'transcribe', language: 'english', duration: 8.47, text: FAKE_TRANSCRIPT, segments: [], usage: { type: 'duration', seconds: 9 } });
    return;
  }
  sendJson(response, 200, {
    text: FAKE_TRANSCRIPT,
    usage: { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 0, audio_tokens: 14 }, output_tokens: 45, total_tokens: 59 },
  });
}

/** One token per four characters of the request's input and instructions, as the fakes count (the real count is the model's). */
function fakeInputTokens(body: { input?: unknown; instructions?: unknown }): number {
  return Math.ceil(JSON.stringify([body.instructions ?? null, body.input ?? null]).length / 4);
}

/** `POST /responses/input_tokens`: `{"object": "response.input_tokens", "input_tokens": N}`. */
function inputTokensAnswer(request: RecordedRequest, response: ServerResponse): void {
  sendJson(response, 200, { object: 'response.input_tokens', input_tokens: fakeInputTokens(request.json ?? {}) });
}

/**
 * `POST /responses/compact`: the `response.compaction` object, whose output is every user
 * message of the input followed by one `compaction` item with OpenAI's encrypted summary.
 */
function compactAnswer(request: RecordedRequest, response: ServerResponse): void {
  const body = (request.json ?? {}) as { model?: unknown; input?: unknown };
  if (typeof body.model !== 'string') return sendError(response, 400, "Missing required parameter: 'model'.", 'model');
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }] : Array.isArray(body.input) ? body.input : [];
  const users = (input as { type?: string; role?: string; content?: unknown }[])
    .filter((item) => (item.type ?? 'message') === 'message' && item.role === 'user')
    .map((item, index) => ({
      id: `msg_fakecompact${index}`,
      type: 'message',
      status: 'completed',
      role: 'user',
      content: typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content,
    }));
  const inputTokens = fakeInputTokens(body);
  sendJson(response, 200, {
    id: 'resp_fakecompact0001',
    object: 'response.compaction',
    created_at: 1_788_205_740,
    output: [...users, { id: 'cmp_fake0001', type: 'compaction', encrypted_content: 'gAAAAABpPDIUcompactedFakeSummary0123456789' }],
    usage: { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: 42, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + 42 },
  });
}

/**
 * `POST /v1/moderations` as the API reference's example answers it (omni-moderation-latest):
 * one result for a string input, one per string of a list. A text with "kill" in it is
 * flagged with the reference example's scores; any other text gets low scores, flagged nowhere.
 */
const MODERATION_FLAGGED_SCORES: Record<string, number> = {
  harassment: 0.8189693396524255,
  'harassment/threatening': 0.804985420696006,
  sexual: 1.573112165348997e-6,
  hate: 0.007562942636942845,
  'hate/threatening': 0.004208854591835476,
  illicit: 0.030535955153511665,
  'illicit/violent': 0.008925306722380033,
  'self-harm/intent': 0.00023023930975076432,
  'self-harm/instructions': 0.0002293869201073356,
  'self-harm': 0.012598046106750154,
  'sexual/minors': 2.212566909570261e-8,
  violence: 0.9999992735124786,
  'violence/graphic': 0.843064871157054,
};
const MODERATION_IMAGE_CATEGORIES = new Set(['sexual', 'self-harm/intent', 'self-harm/instructions', 'self-harm', 'violence', 'violence/graphic']);

function moderationAnswer(request: RecordedRequest, response: ServerResponse): void {
  const body = request.json as { model?: string; input: unknown };
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const results = inputs.map((input) => {
    const flagged = /\bkill/i.test(String(input));
    const scores = Object.fromEntries(Object.entries(MODERATION_FLAGGED_SCORES).map(([category, score]) => [category, flagged ? score : score / 1000]));
    return {
      flagged,
      categories: Object.fromEntries(Object.entries(scores).map(([category, score]) => [category, score > 0.5])),
      category_scores: scores,
      category_applied_input_types: Object.fromEntries(Object.keys(scores).map((category) => [category, MODERATION_IMAGE_CATEGORIES.has(category) ? ['text', 'image'] : ['text']])),
    };
  });
  sendJson(response, 200, { id: 'modr-0d9740456c391e43c445bf0f010940c7', model: body.model ?? 'omni-moderation-latest', results }, {}, 2);
}

/** Starts the fake on loopback; point the gateway at `${fake.server.url}/v1`. */
export async function startOpenAIFake(options: OpenAIFakeOptions = {}): Promise<OpenAIFake> {
  const base = options.basePath ?? '/v1';
  const server: FakeServer = await startFakeServer();
  let chatScript: OpenAIChatScript = { kind: 'reply', text: 'Hello from the fake.', usage: { promptTokens: 5, completionTokens: 4 } };
  let responsesScript: ResponsesScript = { kind: 'text', deltas: ['Hello', ' from', ' the fake.'], usage: { promptTokens: 5, completionTokens: 4 } };
  const responses = new FakeResponses();
  const failures = new Map<string, { status: 400 | 401 | 429 | 500; message: string; param: string | null }>();
  const answers = new Map<string, string>();
  const route = (path: string, answer: (request: RecordedRequest, response: ServerResponse) => void) =>
    server.on(`POST ${base}${path}`, (request, response) => {
      const failure = failures.get(`${base}${path}`);
      if (failure !== undefined) {
        failures.delete(`${base}${path}`);
        return sendError(response, failure.status, failure.message, failure.param);
      }
      const json = answers.get(`${base}${path}`);
      if (json !== undefined) {
        answers.delete(`${base}${path}`);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(json);
        return;
      }
      answer(request, response);
    });
  let sequenceIndex = 0;
  route('/chat/completions', (request, response) => {
    if (chatScript.kind !== 'sequence') return chatAnswer(chatScript, request, response);
    const { scripts } = chatScript;
    const script = scripts[Math.min(sequenceIndex, scripts.length - 1)];
    sequenceIndex += 1;
    if (script === undefined) throw new Error('a sequence script needs at least one script');
    return chatAnswer(script, request, response);
  });
  route('/responses', (request, response) => responses.answer(responsesScript, request, response));
  route('/responses/input_tokens', inputTokensAnswer);
  route('/responses/compact', compactAnswer);
  route('/embeddings', embeddingsAnswer);
  route('/images/generations', imagesAnswer);
  route('/audio/speech', speechAnswer);
  route('/audio/transcriptions', transcriptionAnswer);
  route('/moderations', moderationAnswer);
  return {
    server,
    scriptChat(script) {
      chatScript = script;
      sequenceIndex = 0;
    },
    scriptResponses(script) {
      responsesScript = script;
    },
    failNext(path, status, message, param) {
      failures.set(path, { status, message, param: param ?? null });
    },
    answerNext(path, json) {
      answers.set(path, json);
    },
    chatRequests: () => server.requests.filter((request) => request.path.startsWith(`${base}/chat/completions`)).map(viewOfChatRequest),
    close: () => server.close(),
  };
}
