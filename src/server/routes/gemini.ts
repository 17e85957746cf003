import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CacheTicket } from '../../cache/index.js';
import type { CheckedCall } from '../../calls/index.js';
import { GatewayError } from '../../errors/index.js';
import {
  decodeEmbedRequests,
  embeddingsOf,
  estimateGeminiTokens,
  geminiFormat,
  geminiModelOf,
  geminiModelPage,
  NativeGeminiStreamEncoder,
  geminiUpstreamObjects,
  refuseUntranslatableGemini,
  type GeminiBody,
  type GeminiEmbedRequest,
  type GeminiFramedCall,
} from '../../formats/index.js';
import { estimateTokens } from '../../limits/index.js';
import type { GenerateContentCall, JsonObject } from '../../model-api/index.js';
import type { GatewayApp, RouteModule } from '../app.js';
import type { GatewayContext } from '../context.js';
import { answerInFormat, transcriptCharactersOf, type NativeAnswer } from './format-call.js';
import { admit, bodyBytes, connectionGoneSignal, recordDroppedFields, sendJsonText, sendLoggedJson, servedHeaders } from './model-call.js';
import { admitCached, cacheTicketFor, EMBEDDING_TRAITS } from './response-cache.js';
import { sendEventStream } from './stream-relay.js';

/*
 * Google's Gemini API (decisions §9): `POST /v1beta/models/{model}:{method}` and the model list,
 * the same under /v1/. The model is in the path, and may hold "/" and ":" (catalog ids of other
 * providers do), so the routes are wildcards told apart by the method after the path's last
 * colon (a router constraint), each documented under its own path.
 */

const METHOD_CONSTRAINT = 'modelMethod';

/** The path's method: what follows its last colon (`…/models/gemini-2.5-flash:generateContent`). */
function methodOf(url: string): string | undefined {
  const path = url.split('?', 1)[0]!;
  const colon = path.lastIndexOf(':');
  return colon < 0 || path.lastIndexOf('/') > colon ? undefined : path.slice(colon + 1);
}

function addMethodConstraint(app: GatewayApp): void {
  if (app.hasConstraintStrategy(METHOD_CONSTRAINT)) return;
  app.addConstraintStrategy({
    name: METHOD_CONSTRAINT,
    storage() {
      const handlers = new Map<string, unknown>();
      return { get: (method: string) => (handlers.get(method) ?? null) as never, set: (method: string, handler: unknown) => void handlers.set(method, handler) };
    },
    deriveConstraint: (request) => methodOf(request.url ?? ''),
    // A request of another method falls to the routes without one (GET of a model), or to the 404.
    mustMatchWhenDerived: false,
  });
}

/** The model the path names: the wildcard without its `:method`. */
function modelOf(request: FastifyRequest, method: string): string {
  const rest = (request.params as { '*': string })['*'];
  const model = rest.endsWith(`:${method}`) ? rest.slice(0, -method.length - 1) : rest;
  return decodeURIComponent(model.replace(/^models\//, ''));
}

const Part = Type.Object({}, { additionalProperties: true, description: 'text, inlineData, functionCall, functionResponse, … (fileData is refused: send the bytes inline)' });
const Content = Type.Object({ role: Type.Optional(Type.String({ description: 'user or model' })), parts: Type.Array(Part) }, { additionalProperties: true });

/** generateContent's request. Fields beyond these are read by the format or, for a provider that speaks the API, passed through. */
const GenerateContentRequest = Type.Object(
  {
    contents: Type.Array(Content, { minItems: 1 }),
    systemInstruction: Type.Optional(Content),
    generationConfig: Type.Optional(Type.Object({}, { additionalProperties: true })),
    tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
    toolConfig: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

const CountTokensRequest = Type.Object(
  { contents: Type.Optional(Type.Array(Content)), generateContentRequest: Type.Optional(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true },
);

const EmbedContentRequest = Type.Object({ content: Content }, { additionalProperties: true });
const BatchEmbedContentsRequest = Type.Object({ requests: Type.Array(EmbedContentRequest, { minItems: 1 }) }, { additionalProperties: true });

const GeminiError = Type.Object(
  { error: Type.Object({ code: Type.Integer(), message: Type.String(), status: Type.String(), details: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))) }) },
  { description: "Google's error shape (docs/errors.md): code is the HTTP status, status its google.rpc name" },
);
const GEMINI_ERRORS = { '4xx': GeminiError, '5xx': GeminiError } as const;

const SCHEMA = { tags: ['gemini-api'], security: [{ googApiKey: [] }, { bearerAuth: [] }] } as const;
const ANSWER = Type.Object({}, { additionalProperties: true, description: 'A GenerateContentResponse: candidates, usageMetadata, modelVersion, responseId' });

const ModelParams = Type.Object({ model: Type.String({ description: 'A catalog id or alias of any provider (it may hold "/" and ":")' }) });

interface MethodRoute {
  method: string;
  summary: string;
  description: string;
  body: object;
  response: object;
  handler: (request: FastifyRequest, reply: FastifyReply, model: string) => Promise<FastifyReply>;
}

function generateNatively(request: FastifyRequest, reply: FastifyReply, context: GatewayContext, body: GeminiBody): NativeAnswer<GeminiFramedCall> {
  return (call, decoded) => {
    const native = call.through('geminiApi');
    if (native === undefined) {
      refuseUntranslatableGemini(decoded);
      return undefined;
    }
    request.call.passesThrough(request.principal, geminiUpstreamObjects(body));
    const nativeCall = { body, sourceJson: request.jsonBytes, signal: connectionGoneSignal(reply), requestId: request.id };
    return (cache) => answerNatively(request, reply, context, native, decoded, nativeCall, cache);
  };
}

async function answerNatively(
  request: FastifyRequest,
  reply: FastifyReply,
  context: GatewayContext,
  native: CheckedCall<'geminiApi'>,
  decoded: GeminiFramedCall,
  call: Omit<GenerateContentCall, 'upstreamModel'>,
  cache: CacheTicket | null,
): Promise<FastifyReply> {
  if (decoded.stream) {
    const stream = await native.invoke((api, attempt) => api.stream({ ...call, ...attempt }), call.signal, { cache });
    const encoder = new NativeGeminiStreamEncoder(decoded.model, decoded.sse, { transcriptCharacters: transcriptCharactersOf(context) });
    return sendEventStream(reply, stream, encoder, { requestId: request.id, signal: call.signal, call: request.call });
  }
  const result = await native.invoke((api, attempt) => api.generate({ ...call, ...attempt }), call.signal, { cache });
  // The model the caller named, as every format's answer shows it.
  if (result.response.modelVersion !== undefined) result.response.modelVersion = decoded.model;
  return sendLoggedJson(request, reply, result.response);
}

function generate(context: GatewayContext, stream: boolean): MethodRoute['handler'] {
  return async (request, reply, model) => {
    const body = request.body as GeminiBody;
    request.call.describe({ mode: 'chat', payload: body });
    const sse = (request.query as { alt?: string }).alt === 'sse';
    return answerInFormat(request, reply, context, geminiFormat, { model, stream, sse, body }, generateNatively(request, reply, context, body));
  };
}

/** countTokens: the provider's own count where it speaks the API or has a count endpoint, else the format's estimate; no model call. */
function countTokens(): MethodRoute['handler'] {
  return async (request, reply, model) => {
    const body = request.body as { contents?: unknown; generateContentRequest?: GeminiBody };
    request.call.describe({ mode: 'chat', payload: body });
    const generateRequest: GeminiBody = body.generateContentRequest ?? { contents: body.contents as GeminiBody['contents'] };
    const decoded = geminiFormat.decodeRequest({ model, stream: false, sse: false, body: generateRequest }, undefined);
    const call = request.call.check({ mode: 'chat', model, capability: 'chat', messages: decoded.body.messages as unknown[], allowedFor: request.principal });
    // Counting calls no model: it counts against the key's requests per minute only.
    await admit(request, reply, { tokens: 0, costUsd: 0 });
    const signal = connectionGoneSignal(reply);
    const native = call.through('geminiApi');
    if (native !== undefined) {
      const counted = await native.invoke((api, attempt) => api.countTokens({ body, sourceJson: request.jsonBytes, signal, requestId: request.id, ...attempt }), signal);
      return sendJsonText(reply, counted);
    }
    const { countTokens: vendorCount } = call.target.capability;
    const totalTokens =
      vendorCount === undefined
        ? estimateGeminiTokens(generateRequest)
        : await call.invoke((chat, attempt) => chat.countTokens!({ body: decoded.body, extensions: decoded.extensions, signal, requestId: request.id, ...attempt }), signal);
    return sendJsonText(reply, { totalTokens });
  };
}

/** embedContent and batchEmbedContents through the one embeddings call: `{embedding}` or `{embeddings}` in Google's shape. */
function embed(batch: boolean): MethodRoute['handler'] {
  return async (request, reply, model) => {
    const body = request.body as GeminiEmbedRequest & { requests?: GeminiEmbedRequest[] };
    request.call.describe({ mode: 'embedding', payload: body });
    const requests = batch ? (body.requests ?? []) : [body];
    const decoded = decodeEmbedRequests(requests, (index) => (batch ? `requests[${index}]` : ''));
    const call = request.call.check({ mode: 'embedding', model, capability: 'embeddings', allowedFor: request.principal, onServed: servedHeaders(reply) });
    // Embeddings are deterministic; the key is the embeddings body the provider gets, on a surface of its own.
    const cache = await cacheTicketFor(request, reply, {
      surface: batch ? 'gemini-batch-embed' : 'gemini-embed',
      model: call.target.resolved.id,
      stream: false,
      body: decoded.body,
      traits: EMBEDDING_TRAITS,
    });
    await admitCached(request, reply, call, cache, () => estimateTokens(call.target.resolved.model.entry.pricing, bodyBytes(request), 0));
    recordDroppedFields(request, reply, decoded.dropped);
    const signal = connectionGoneSignal(reply);
    const result = await call.invoke((embeddings, attempt) => embeddings.embed({ ...attempt, body: decoded.body, signal, requestId: request.id }), signal, { cache });
    const response = result.responseJson === undefined ? result.response : (JSON.parse(result.responseJson.toString('utf8')) as JsonObject);
    const embeddings = embeddingsOf(response);
    request.call.answered({ payload: { embeddings: result.vectors.count, dimensions: result.vectors.dimensions, usage: response.usage ?? null } });
    return sendJsonText(reply, batch ? { embeddings } : { embedding: embeddings[0] ?? { values: [] } });
  };
}

function methodRoutes(context: GatewayContext): MethodRoute[] {
  return [
    {
      method: 'generateContent',
      summary: 'Generate content (Gemini API)',
      description: "Google's generateContent over every chat model: Google's models get the body as sent, others a translation (docs/client-apis.md).",
      body: GenerateContentRequest,
      response: ANSWER,
      handler: generate(context, false),
    },
    {
      method: 'streamGenerateContent',
      summary: 'Stream generated content (Gemini API)',
      description: 'As generateContent, streamed: with alt=sse one server-sent event per GenerateContentResponse, without it a streamed JSON array of them.',
      body: GenerateContentRequest,
      response: { description: 'GenerateContentResponse frames', content: { 'text/event-stream': { schema: Type.String() }, 'application/json': { schema: Type.Array(ANSWER) } } },
      handler: generate(context, true),
    },
    {
      method: 'countTokens',
      summary: "Count a request's tokens (Gemini API)",
      description: "The provider's own count where it has one; an estimate for the others. Calls no model.",
      body: CountTokensRequest,
      response: Type.Object({ totalTokens: Type.Integer() }, { additionalProperties: true }),
      handler: countTokens(),
    },
    {
      method: 'embedContent',
      summary: 'Embed content (Gemini API)',
      description: 'The text of one content as one embedding, through whichever provider serves the embedding model.',
      body: EmbedContentRequest,
      response: Type.Object({ embedding: Type.Object({ values: Type.Array(Type.Number()) }) }),
      handler: embed(false),
    },
    {
      method: 'batchEmbedContents',
      summary: 'Embed contents in a batch (Gemini API)',
      description: 'One embedding per request, in order.',
      body: BatchEmbedContentsRequest,
      response: Type.Object({ embeddings: Type.Array(Type.Object({ values: Type.Array(Type.Number()) })) }),
      handler: embed(true),
    },
  ];
}

/** The model list in Google's shape (public, as GET /v1/models is): for the /v1beta paths, and GET /v1/models with a Google client's headers. */
export function geminiModelList(context: GatewayContext, query: { pageSize?: string; pageToken?: string }): JsonObject {
  return geminiModelPage(context.catalog.list(), query);
}

/** One model in Google's shape (any id or alias of the catalog). */
export function geminiModel(context: GatewayContext, requested: string): JsonObject {
  const model = requested.replace(/^models\//, '');
  return geminiModelOf(context.catalog.entry(model), model);
}

/** Whether a request to the shared GET /v1/models paths comes from a Google client (its key header, or a key in the query). */
export function asksInGeminiShape(request: FastifyRequest): boolean {
  return request.headers['x-goog-api-key'] !== undefined || request.headers['x-goog-api-client'] !== undefined || (request.query as { key?: unknown }).key !== undefined;
}

const ListQuery = Type.Object({
  pageSize: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'Models per page (default 50, at most 1000)' })),
  pageToken: Type.Optional(Type.String({ description: 'The nextPageToken of the previous page' })),
});

export const geminiRoutes: RouteModule = (app, context) => {
  addMethodConstraint(app);
  const config = { scope: 'model:request', format: geminiFormat } as const;
  for (const prefix of ['/v1beta', '/v1']) {
    for (const route of methodRoutes(context)) {
      app.route({
        method: 'POST',
        url: `${prefix}/models/*`,
        constraints: { [METHOD_CONSTRAINT]: route.method },
        config: {
          ...config,
          swaggerTransform: ({ schema }: { schema: object }) => ({ url: `${prefix}/models/:model(.+)::${route.method}`, schema: { ...schema, params: ModelParams } }),
        },
        schema: { ...SCHEMA, summary: route.summary, description: route.description, body: route.body, response: { 200: route.response, ...GEMINI_ERRORS } },
        handler: (request, reply) => route.handler(request, reply, modelOf(request, route.method)),
      });
    }
  }
  app.get(
    '/v1beta/models',
    { config: { format: geminiFormat }, schema: { ...SCHEMA, security: [], summary: 'List models (Gemini API)', description: "Every catalog model in Google's list shape (supportedGenerationMethods: what these paths serve for it), paged by pageSize and pageToken.", querystring: ListQuery, response: { 200: Type.Object({}, { additionalProperties: true }), ...GEMINI_ERRORS } } },
    async (request) => geminiModelList(context, request.query as { pageSize?: string; pageToken?: string }),
  );
  app.get(
    '/v1beta/models/*',
    {
      config: { format: geminiFormat, swaggerTransform: ({ schema }: { schema: object }) => ({ url: '/v1beta/models/:model', schema: { ...schema, params: ModelParams } }) },
      schema: { ...SCHEMA, security: [], summary: 'Get a model (Gemini API)', description: "One model in Google's shape.", response: { 200: Type.Object({}, { additionalProperties: true }), ...GEMINI_ERRORS } },
    },
    async (request) => geminiModel(context, (request.params as { '*': string })['*']),
  );
  // Paths of the Gemini API that are not served answer in its shape too.
  void app.register(
    async (scope) => {
      scope.setNotFoundHandler(async (request, reply) => {
        const error = new GatewayError('not_found', `There is no route ${request.method} ${request.url.split('?')[0]}. The Gemini API's paths are models/{model}:generateContent, :streamGenerateContent, :countTokens, :embedContent, :batchEmbedContents and GET models.`);
        return reply.code(error.status).send(geminiFormat.encodeError(error, request.id).body);
      });
    },
    { prefix: '/v1beta' },
  );
};
