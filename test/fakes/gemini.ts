import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { holdResponse, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.js';
import { agentTurn, geminiTurnView } from './agent-turns.js';

/*
 * A fake of the Gemini API (generativelanguage.googleapis.com, v1beta) as Google's API
 * reference documents it:
 * - POST /v1beta/models/{model}:generateContent → GenerateContentResponse (candidates[].content
 *   .parts, finishReason, safetyRatings, usageMetadata, modelVersion, responseId), pretty-printed
 *   JSON as the real API sends it; a blocked prompt has promptFeedback.blockReason and no candidates.
 * - :streamGenerateContent?alt=sse → one GenerateContentResponse per server-sent event, framed
 *   `data: {…}\r\n\r\n`; the last frame carries finishReason and the full usage; an error
 *   inside the 200 stream is a `data: {"error": {…}}` frame. Without alt=sse the real API
 *   answers one JSON array, and so does this fake.
 * - :batchEmbedContents → {"embeddings": [{"values": […]}]}; :predict (Imagen) →
 *   {"predictions": [{"mimeType", "bytesBase64Encoded"}]}.
 * - Errors: {"error": {"code", "message", "status", "details"}} with the statuses of
 *   google.rpc.Code (400 INVALID_ARGUMENT, 403 PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED with
 *   RetryInfo, 500 INTERNAL, 503 UNAVAILABLE); a wrong x-goog-api-key is a 400 with reason
 *   API_KEY_INVALID, a missing one a 403, as the real API does.
 * Like the real API it refuses unknown request fields, so a mapping mistake fails here too.
 */

/** Request JSON as received: the fake reads it loosely, as the real API's parser does. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

// Built at run time so the source holds no string shaped like a real key; the shape is what the gateway checks.
export const FAKE_GEMINI_KEY = ['AIza', 'SyFakeGeminiTestKey0123456789abcdef'].join('');

/** A 1×1 PNG, the image Imagen "generates". */
export const GENERATED_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  thoughtsTokens?: number;
}

export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'batchEmbedContents' | 'predict';

export type GeminiReply =
  /** This body for generateContent; a streamed request gets it as frames of its text. */
  | { response: Record<string, unknown> }
  /**
   * These frames in a 200 stream, then: `complete` ends the response, `drop` cuts the
   * connection (a truncated stream), `hang` keeps it open until the client goes away.
   */
  | { frames: unknown[]; end?: 'complete' | 'drop' | 'hang'; onClose?: () => void }
  /** An error body; `status` overrides the code's usual status name (400 FAILED_PRECONDITION, …). */
  | { error: number; message?: string; status?: string }
  /** No response headers for this long (or until the client gives up), then the default reply. */
  | { delayMs: number }
  /** The reply this function picks for each request (one fake serving many scripted conversations). */
  | { respond: (request: RecordedRequest) => GeminiReply };

export interface FakeGemini {
  readonly server: FakeServer;
  /** Base URL as the gateway takes it (GEMINI_BASE_URL, the host without /v1beta). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers the next calls of a method with this reply (until set again); default: a short answer. */
  reply(method: GeminiMethod | 'chat', reply: GeminiReply | null): void;
  /** Every method back to its default reply. */
  resetReplies(): void;
  /** The last request of a method. */
  last(method: GeminiMethod): RecordedRequest | undefined;
  close(): Promise<void>;
}

export function responseId(): string {
  return randomBytes(16).toString('base64url').slice(0, 22);
}

const NEGLIGIBLE_RATINGS = ['HARM_CATEGORY_HATE_SPEECH', 'HARM_CATEGORY_DANGEROUS_CONTENT', 'HARM_CATEGORY_HARASSMENT', 'HARM_CATEGORY_SEXUALLY_EXPLICIT'].map(
  (category) => ({ category, probability: 'NEGLIGIBLE' }),
);

export function usageMetadata(usage: UsageCounts, complete = true): Record<string, unknown> {
  const total = usage.promptTokens + usage.completionTokens + (usage.thoughtsTokens ?? 0);
  return {
    promptTokenCount: usage.promptTokens,
    ...(complete ? { candidatesTokenCount: usage.completionTokens } : {}),
    ...(usage.cachedTokens !== undefined ? { cachedContentTokenCount: usage.cachedTokens } : {}),
    totalTokenCount: complete ? total : usage.promptTokens,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.promptTokens }],
    ...(usage.cachedTokens !== undefined ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: usage.cachedTokens }] } : {}),
    ...(complete && usage.thoughtsTokens !== undefined ? { thoughtsTokenCount: usage.thoughtsTokens } : {}),
  };
}

/** A GenerateContentResponse with one candidate holding these parts. */
export function candidateResponse(
  parts: Record<string, unknown>[],
  options: { finishReason?: string | null; usage?: UsageCounts; model?: string; id?: string } = {},
): Record<string, unknown> {
  const candidate: Record<string, unknown> = { content: { parts, role: 'model' } };
  if (options.finishReason !== null) candidate.finishReason = options.finishReason ?? 'STOP';
  if (candidate.finishReason !== undefined) candidate.safetyRatings = NEGLIGIBLE_RATINGS;
  candidate.index = 0;
  return {
    candidates: [candidate],
    usageMetadata: usageMetadata(options.usage ?? { promptTokens: 8, completionTokens: 12 }, options.finishReason !== null),
    modelVersion: options.model ?? 'gemini-2.5-flash',
    responseId: options.id ?? responseId(),
  };
}

export function textResponse(text: string, options: Parameters<typeof candidateResponse>[1] = {}): Record<string, unknown> {
  return candidateResponse([{ text }], options);
}

/**
 * A candidate that stopped with no content at all, as the API answers a malformed or
 * unexpected function call: `{"finishReason": …, "index": 0}`, usage with the prompt only.
 */
export function contentlessCandidateResponse(finishReason: string, promptTokens = 9): Record<string, unknown> {
  return {
    candidates: [{ finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: promptTokens, totalTokenCount: promptTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }] },
    modelVersion: 'gemini-2.5-flash',
    responseId: responseId(),
  };
}

/** A prompt refused by the safety filters: promptFeedback.blockReason and no candidates. */
export function blockedPromptResponse(blockReason = 'SAFETY', promptTokens = 9): Record<string, unknown> {
  return {
    promptFeedback: {
      blockReason,
      safetyRatings: [
        { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
        { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'HIGH', blocked: true },
        { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
        { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'NEGLIGIBLE' },
      ],
    },
    usageMetadata: { promptTokenCount: promptTokens, totalTokenCount: promptTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }] },
    modelVersion: 'gemini-2.5-flash',
    responseId: responseId(),
  };
}

/**
 * The frames the API streams for an answer of these text pieces: one frame per piece (the
 * usage so far on each), the last with finishReason and the full usage.
 */
export function textFrames(pieces: string[], usage: UsageCounts, options: { finish?: boolean } = {}): Record<string, unknown>[] {
  const id = responseId();
  return pieces.map((piece, index) => {
    const last = index === pieces.length - 1 && options.finish !== false;
    return textResponse(piece, { finishReason: last ? 'STOP' : null, usage, id });
  });
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'Request contains an invalid argument.',
  401: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  403: 'The caller does not have permission',
  404: 'models/unknown-model is not found for API version v1beta, or is not supported for generateContent.',
  429: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
  504: 'Deadline expired before operation could complete.',
};

export function errorBody(code: number, message?: string, details?: unknown[], status?: string): Record<string, unknown> {
  return {
    error: {
      code,
      message: message ?? DEFAULT_MESSAGES[code] ?? 'Unknown error.',
      status: status ?? STATUS_NAMES[code] ?? 'UNKNOWN',
      ...(details !== undefined ? { details } : {}),
    },
  };
}

const QUOTA_DETAILS = [
  {
    '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
    violations: [
      {
        quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
        quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
        quotaDimensions: { location: 'global', model: 'gemini-2.5-flash' },
        quotaValue: '10',
      },
    ],
  },
  { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
  { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '17s' },
];

const API_KEY_INVALID_DETAILS = [
  {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'API_KEY_INVALID',
    domain: 'googleapis.com',
    metadata: { service: 'generativelanguage.googleapis.com' },
  },
  { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
];

/**
 * Google's JSON style inside SSE frames: one line, `"key": value` with members joined by a
 * bare comma, e.g. `{"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"}}]}`.
 */
export function googleCompactJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(googleCompactJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .map(([key, member]) => `${JSON.stringify(key)}: ${googleCompactJson(member)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function writeFrame(response: ServerResponse, frame: unknown): void {
  response.write(`data: ${googleCompactJson(frame)}\r\n\r\n`);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', server: 'scaffolding on HTTPServer2' });
  response.end(JSON.stringify(body, null, 2));
}

export function sendError(response: ServerResponse, code: number, message?: string, status?: string): void {
  const details = code === 429 ? QUOTA_DETAILS : undefined;
  sendJson(response, code, errorBody(code, message, details, status));
}

export async function startFakeGemini(options: { apiKey?: string } = {}): Promise<FakeGemini> {
  const server = await startFakeServer();
  const apiKey = options.apiKey ?? FAKE_GEMINI_KEY;
  const replies = new Map<GeminiMethod, GeminiReply>();
  server.on('POST /v1beta/models/*', async (request, response) => {
    const [model, method] = request.path.split('?')[0]!.slice('/v1beta/models/'.length).split(':') as [string, GeminiMethod];
    const refusal = validate(request, apiKey, model, method);
    if (refusal !== null) return sendJson(response, refusal.code, errorBody(refusal.code, refusal.message, refusal.details));
    const reply = replies.get(method) ?? (method === 'streamGenerateContent' ? replies.get('generateContent') : undefined);
    return answer(reply ?? defaultReply(method, request), request, response, method);
  });
  return {
    server,
    url: server.url,
    requests: server.requests,
    reply(method, reply) {
      const methods: GeminiMethod[] = method === 'chat' ? ['generateContent', 'streamGenerateContent'] : [method];
      for (const name of methods) {
        if (reply === null) replies.delete(name);
        else replies.set(name, reply);
      }
    },
    resetReplies: () => replies.clear(),
    last: (method) => server.requests.filter((request) => request.path.includes(`:${method}`)).at(-1),
    close: () => server.close(),
  };
}

/** A coding agent's turn (agent-turns.ts) as a candidate: text, or one functionCall part. */
export const AGENT_GEMINI_TURNS: GeminiReply = {
  respond(request) {
    const turn = agentTurn(geminiTurnView(request.json));
    const usage = { promptTokens: 19, completionTokens: 7 };
    const part = turn.kind === 'text' ? { text: turn.text } : { functionCall: { name: turn.name, args: turn.arguments } };
    return { response: candidateResponse([part], { usage }) };
  },
};

function defaultReply(method: GeminiMethod, request: RecordedRequest): GeminiReply {
  switch (method) {
    case 'generateContent':
    case 'streamGenerateContent':
      return { response: textResponse('Hello! How can I help you today?') };
    case 'countTokens': {
      // One token per four characters of the request, as the fakes count; the real count is the model's.
      const totalTokens = Math.ceil(JSON.stringify(request.json).length / 4);
      return { response: { totalTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }] } };
    }
    case 'batchEmbedContents':
      return {
        response: {
          embeddings: (request.json.requests as { outputDimensionality?: number }[]).map((item, index) => ({
            values: Array.from({ length: item.outputDimensionality ?? 8 }, (_, at) => Number(((index + 1) * 0.01 + at * 0.001).toFixed(6))),
          })),
        },
      };
    case 'predict':
      return {
        response: {
          predictions: Array.from({ length: request.json.parameters?.sampleCount ?? 1 }, () => ({ mimeType: 'image/png', bytesBase64Encoded: GENERATED_PNG_BASE64 })),
        },
      };
  }
}

async function answer(reply: GeminiReply, request: RecordedRequest, response: ServerResponse, method: GeminiMethod): Promise<void> {
  if ('respond' in reply) return answer(reply.respond(request), request, response, method);
  if ('delayMs' in reply) {
    if (!(await holdResponse(response, reply.delayMs))) return;
    return answer(defaultReply(method, request), request, response, method);
  }
  if ('error' in reply) return sendError(response, reply.error, reply.message, reply.status);
  if ('response' in reply) {
    if (method !== 'streamGenerateContent') return sendJson(response, 200, reply.response);
    return sendStream(response, request, { frames: [reply.response] });
  }
  if (method !== 'streamGenerateContent') return sendJson(response, 200, mergeFrames(reply.frames as Record<string, Loose>[]));
  return sendStream(response, request, reply);
}

/** A non-streamed call scripted with frames gets them as one response: texts joined, the last frame's end. */
function mergeFrames(frames: Record<string, Loose>[]): Record<string, unknown> {
  const last = frames.at(-1) ?? {};
  const text = frames.map((frame) => frame.candidates?.[0]?.content?.parts?.map((part: Loose) => part.text ?? '').join('') ?? '').join('');
  const response = textResponse(text, { finishReason: last.candidates?.[0]?.finishReason ?? 'STOP' });
  // The whole answer's usage is the last frame's, every count of it (thinking, cache).
  return { ...response, ...(last.usageMetadata !== undefined ? { usageMetadata: last.usageMetadata } : {}) };
}

async function sendStream(response: ServerResponse, request: RecordedRequest, reply: Extract<GeminiReply, { frames: unknown[] }>): Promise<void> {
  if (!request.path.includes('alt=sse')) return sendJson(response, 200, reply.frames);
  if (reply.onClose !== undefined) response.on('close', reply.onClose);
  response.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff', server: 'scaffolding on HTTPServer2' });
  for (const frame of reply.frames) writeFrame(response, frame);
  if (reply.end === 'hang') return new Promise<void>((resolve) => response.on('close', resolve));
  if (reply.end !== 'drop') return void response.end();
  // A truncated stream: once the frames are flushed, the connection drops mid-body.
  await new Promise<void>((resolve) => response.write('', () => resolve()));
  response.destroy();
}

const KNOWN_FIELDS: Record<GeminiMethod, readonly string[]> = {
  generateContent: ['contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig', 'safetySettings', 'cachedContent'],
  streamGenerateContent: ['contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig', 'safetySettings', 'cachedContent'],
  countTokens: ['contents', 'generateContentRequest'],
  batchEmbedContents: ['requests'],
  predict: ['instances', 'parameters'],
};

const GENERATION_CONFIG_FIELDS = [
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'candidateCount', 'maxOutputTokens',
  'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'imageConfig',
  'mediaResolution', 'speechConfig', 'enableEnhancedCivicAnswers', 'responseJsonSchema',
];

const PART_FIELDS = ['text', 'inlineData', 'functionCall', 'functionResponse', 'fileData', 'thought', 'thoughtSignature', 'executableCode', 'codeExecutionResult'];

const SCHEMA_TYPES = ['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'];
const SCHEMA_FIELDS = [
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required', 'minProperties',
  'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering', 'default', 'items', 'minimum', 'maximum',
];

function unknownName(name: string, at: string): string {
  return `Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`;
}

interface Refusal {
  code: number;
  message: string;
  details?: unknown[];
}

/** The checks the real API makes before generating, with its error messages. */
function validate(request: RecordedRequest, apiKey: string, model: string, method: GeminiMethod): Refusal | null {
  if (request.path.includes('key=')) return { code: 400, message: 'The fake refuses API keys in the query string: the gateway must use x-goog-api-key.' };
  const key = request.headers['x-goog-api-key'];
  if (key === undefined) {
    return {
      code: 403,
      message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    };
  }
  if (key !== apiKey) return { code: 400, message: 'API key not valid. Please pass a valid API key.', details: API_KEY_INVALID_DETAILS };
  if (!(method in KNOWN_FIELDS)) return { code: 404, message: `Method ${method} not found.` };
  const body = request.json;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { code: 400, message: 'Invalid JSON payload received.' };
  const unknown = Object.keys(body).find((name) => !KNOWN_FIELDS[method].includes(name));
  if (unknown !== undefined) return { code: 400, message: unknownName(unknown, '') };
  if (method === 'batchEmbedContents') return validateEmbed(body, model);
  if (method === 'predict') return typeof body.instances?.[0]?.prompt === 'string' ? null : { code: 400, message: 'Prompt is required.' };
  if (method === 'countTokens') return validateCount(body, model);
  return validateGenerate(body, model);
}

function validateEmbed(body: Loose, model: string): Refusal | null {
  if (!Array.isArray(body.requests) || body.requests.length === 0) return { code: 400, message: '* BatchEmbedContentsRequest.requests: contents is not specified\n' };
  for (const [index, item] of body.requests.entries()) {
    if (item.model !== `models/${model}`) {
      return { code: 400, message: `* BatchEmbedContentsRequest.requests[${index}].model: model in the request does not match the model of the batch request\n` };
    }
    if (typeof item.content?.parts?.[0]?.text !== 'string') return { code: 400, message: `* BatchEmbedContentsRequest.requests[${index}].content: contents is not specified\n` };
  }
  return null;
}

/** countTokens takes `contents`, or a whole generateContent request (with its `model`) in `generateContentRequest`. */
function validateCount(body: Loose, model: string): Refusal | null {
  const whole = body.generateContentRequest;
  if (whole === undefined) return validateGenerate(body, model);
  if (body.contents !== undefined) return { code: 400, message: 'Only one of contents and generateContentRequest may be set.' };
  const unknown = Object.keys(whole).find((name) => name !== 'model' && !KNOWN_FIELDS.generateContent.includes(name));
  if (unknown !== undefined) return { code: 400, message: unknownName(unknown, 'generate_content_request') };
  if (whole.model !== `models/${model}`) return { code: 400, message: `generateContentRequest.model: expected models/${model}, got ${String(whole.model)}` };
  return validateGenerate(whole, model);
}

function validateGenerate(body: Loose, model: string): Refusal | null {
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return { code: 400, message: '* GenerateContentRequest.contents: contents is not specified\n' };
  }
  const unknownConfig = Object.keys(body.generationConfig ?? {}).find((name) => !GENERATION_CONFIG_FIELDS.includes(name));
  if (unknownConfig !== undefined) return { code: 400, message: unknownName(unknownConfig, 'generation_config') };
  // Only gemini-2.0 models take penalties; later ones refuse any but 0 with this message, naming no field.
  const penalties = [body.generationConfig?.presencePenalty, body.generationConfig?.frequencyPenalty];
  if (!model.startsWith('gemini-2.0') && penalties.some((value) => value !== undefined && value !== 0)) {
    return { code: 400, message: `Penalty is not enabled for models/${model}` };
  }
  const contents = [...body.contents, ...(body.systemInstruction !== undefined ? [body.systemInstruction] : [])];
  for (const [index, content] of contents.entries()) {
    if (content.role !== undefined && content.role !== 'user' && content.role !== 'model') {
      return { code: 400, message: `Please use a valid role: user, model.` };
    }
    if (!Array.isArray(content.parts) || content.parts.length === 0) {
      return { code: 400, message: `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.\n` };
    }
    for (const part of content.parts) {
      const unknownPart = Object.keys(part).find((name) => !PART_FIELDS.includes(name));
      if (unknownPart !== undefined) return { code: 400, message: unknownName(unknownPart, `contents[${index}].parts[0]`) };
      if (part.text === '') return { code: 400, message: `Unable to submit request because it has an empty text parameter.` };
    }
  }
  // Gemini 2.x cannot combine its built-in tools with function calling (Gemini 3 can).
  const tools: Loose[] = body.tools ?? [];
  if (!model.startsWith('gemini-3') && tools.some((tool) => tool.googleSearch !== undefined) && tools.some((tool) => tool.functionDeclarations !== undefined)) {
    return { code: 400, message: 'Tool use with function calling is unsupported for this model when built-in tools are enabled.' };
  }
  const schemas = [
    body.generationConfig?.responseSchema,
    ...(body.tools ?? []).flatMap((tool: Loose) => (tool.functionDeclarations ?? []).map((declaration: Loose) => declaration.parameters)),
  ].filter((schema) => schema !== undefined);
  for (const schema of schemas) {
    const problem = schemaProblem(schema, 'schema');
    if (problem !== null) return { code: 400, message: problem };
  }
  return null;
}

/** Gemini's Schema is an OpenAPI subset: unknown keywords (additionalProperties, $ref, …) are refused. */
function schemaProblem(schema: Loose, at: string): string | null {
  const unknown = Object.keys(schema).find((name) => !SCHEMA_FIELDS.includes(name));
  if (unknown !== undefined) return unknownName(unknown, at);
  if (schema.type !== undefined && !SCHEMA_TYPES.includes(String(schema.type).toUpperCase())) {
    return `Invalid value at '${at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "${schema.type}"`;
  }
  // Schema.enum is a repeated string field: Google's JSON parser refuses any other value.
  const notString = ((schema.enum ?? []) as unknown[]).findIndex((value) => typeof value !== 'string');
  if (notString >= 0) return `Invalid value at '${at}.enum[${notString}]' (TYPE_STRING), ${String(schema.enum[notString])}`;
  if (String(schema.type).toUpperCase() === 'OBJECT' && (schema.properties === undefined || Object.keys(schema.properties).length === 0)) {
    return `* ${at}.properties: should be non-empty for OBJECT type\n`;
  }
  const children: [string, Loose][] = [
    ...Object.entries(schema.properties ?? {}).map(([name, child]) => [`${at}.properties[${name}].value`, child] as [string, Loose]),
    ...(schema.items !== undefined ? [[`${at}.items`, schema.items] as [string, Loose]] : []),
    ...(schema.anyOf ?? []).map((child: Loose, index: number) => [`${at}.any_of[${index}]`, child] as [string, Loose]),
  ];
  for (const [path, child] of children) {
    const problem = schemaProblem(child, path);
    if (problem !== null) return problem;
  }
  return null;
}
