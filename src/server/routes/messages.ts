import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CacheTicket } from '../../cache/index.js';
import type { CheckedCall } from '../../calls/index.js';
import {
  estimateInputTokens,
  messagesFormat,
  messagesUpstreamObjects,
  NativeMessagesStreamEncoder,
  refuseUntranslatable,
  type MessagesBody,
  type MessagesDecodedCall,
} from '../../formats/index.js';
import type { MessagesCall } from '../../model-api/index.js';
import type { RouteModule } from '../app.js';
import type { GatewayContext } from '../context.js';
import { answerInFormat, transcriptCharactersOf, type NativeAnswer } from './format-call.js';
import { admit, connectionGoneSignal, MODEL_ROUTE_SCHEMA, sendJsonText, sendLoggedJson } from './model-call.js';
import { sendEventStream } from './stream-relay.js';

const Block = Type.Object({ type: Type.String({ description: 'text, image, document, tool_use, tool_result, …' }) }, { additionalProperties: true });

const Message = Type.Object(
  {
    role: Type.String({ description: 'user, assistant, or any role the provider takes (a mid-conversation system message goes to Anthropic as sent)' }),
    content: Type.Unsafe<string | Record<string, unknown>[]>({
      anyOf: [Type.String(), Type.Array(Block)],
      description: 'A string, or content blocks: text, image (base64 or url source), document (base64 PDF), tool_use, tool_result',
    }),
  },
  { additionalProperties: true },
);

const requestFields = {
  model: Type.String({ minLength: 1, description: 'A model id or alias from GET /v1/models' }),
  messages: Type.Array(Message, { minItems: 1 }),
  system: Type.Optional(Type.Unsafe<string | Record<string, unknown>[]>({ anyOf: [Type.String(), Type.Array(Block)], description: 'A string or text blocks' })),
  tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  tool_choice: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })),
};

/**
 * Anthropic's Messages request. Fields beyond these (temperature, top_p, stop_sequences,
 * metadata, and for models of a provider that speaks the API natively everything it takes:
 * thinking, cache_control, context_management, …) are read by the format or passed through.
 */
const MessagesRequest = Type.Object(
  {
    ...requestFields,
    max_tokens: Type.Integer({ minimum: 1 }),
    stream: Type.Optional(Type.Boolean({ description: 'true: server-sent events with event: lines, message_start … message_stop' })),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: true },
);

const CountTokensRequest = Type.Object(requestFields, { additionalProperties: true });

/** Anthropic's error body, as every error on these paths is answered. */
const MessagesError = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object({ type: Type.String(), message: Type.String() }),
    request_id: Type.String(),
  },
  { description: "Anthropic-shaped error (see docs/errors.md); the request id also in the request-id header" },
);

const MESSAGES_ERRORS = { '4xx': MessagesError, '5xx': MessagesError } as const;

const MessageResponses = {
  description: 'A message, or with stream: true server-sent events (message_start, content_block_start, ping, content_block_delta, content_block_stop, message_delta, message_stop)',
  content: {
    'application/json': { schema: Type.Object({ id: Type.String(), type: Type.Literal('message'), content: Type.Array(Block) }, { additionalProperties: true }) },
    'text/event-stream': { schema: Type.String({ description: 'event: message_start\\ndata: {…}\\n\\n … event: message_stop\\ndata: {"type":"message_stop"}\\n\\n' }) },
  },
};

/** The caller's Messages API headers, forwarded to a provider that speaks the API. */
function apiHeadersOf(request: FastifyRequest): Pick<MessagesCall, 'version' | 'beta'> {
  const header = (name: string): string | undefined => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  return { version: header('anthropic-version'), beta: header('anthropic-beta') };
}

function nativeCallOf(request: FastifyRequest, reply: FastifyReply, body: MessagesBody): Omit<MessagesCall, 'upstreamModel'> {
  return { body, sourceJson: request.jsonBytes, signal: connectionGoneSignal(reply), requestId: request.id, ...apiHeadersOf(request) };
}

/**
 * Models of a provider that speaks the Messages API get the request as sent; for the
 * others it is translated, refused when a field has no equivalent; the beta features the
 * caller asked Anthropic for are dropped with the other hints (format-call.ts tells them).
 */
function messagesNatively(request: FastifyRequest, reply: FastifyReply, context: GatewayContext, body: MessagesBody): NativeAnswer<MessagesDecodedCall> {
  return (call, decoded) => {
    const native = call.through('messages');
    if (native === undefined) {
      refuseUntranslatable(decoded);
      if (request.headers['anthropic-beta'] !== undefined) decoded.dropped.push('anthropic-beta');
      return undefined;
    }
    request.call.passesThrough(request.principal, messagesUpstreamObjects(body));
    return (cache) => answerNatively(request, reply, context, native, decoded, nativeCallOf(request, reply, body), cache);
  };
}

async function answerNatively(
  request: FastifyRequest,
  reply: FastifyReply,
  context: GatewayContext,
  native: CheckedCall<'messages'>,
  decoded: MessagesDecodedCall,
  call: Omit<MessagesCall, 'upstreamModel'>,
  cache: CacheTicket | null,
): Promise<FastifyReply> {
  if (decoded.stream) {
    const stream = await native.invoke((messages, attempt) => messages.stream({ ...call, ...attempt }), call.signal, { cache });
    const encoder = new NativeMessagesStreamEncoder(decoded.model, { transcriptCharacters: transcriptCharactersOf(context) });
    return sendEventStream(reply, stream, encoder, { requestId: request.id, signal: call.signal, call: request.call });
  }
  const result = await native.invoke((messages, attempt) => messages.create({ ...call, ...attempt }), call.signal, { cache });
  result.message.model = decoded.model;
  return sendLoggedJson(request, reply, result.message);
}

export const messagesRoutes: RouteModule = (app, context) => {
  const config = { scope: 'model:request', format: messagesFormat } as const;
  app.post(
    '/v1/messages',
    {
      config,
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Create a message (Anthropic Messages API)',
        description:
          "Anthropic's Messages API, JSON or streamed, over every chat model: models of a provider that speaks it get the request as sent (anthropic-beta, cache_control and thinking included), others a translation.",
        body: MessagesRequest,
        response: { 200: MessageResponses, ...MESSAGES_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as MessagesBody;
      reply.header('request-id', request.id);
      request.call.describe({ mode: 'chat', payload: body });
      return answerInFormat(request, reply, context, messagesFormat, body, messagesNatively(request, reply, context, body));
    },
  );

  app.post(
    '/v1/messages/count_tokens',
    {
      config,
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: "Count a message's input tokens (Anthropic Messages API)",
        description: "The provider's own count where it has one (Anthropic); an estimate for other providers (docs/client-apis.md).",
        body: CountTokensRequest,
        response: { 200: Type.Object({ input_tokens: Type.Integer() }), ...MESSAGES_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as MessagesBody;
      reply.header('request-id', request.id);
      request.call.describe({ mode: 'chat', payload: body });
      const decoded = messagesFormat.decodeRequest(body, undefined);
      const call = request.call.check({ mode: 'chat', model: body.model, capability: 'chat', messages: decoded.body.messages as unknown[], allowedFor: request.principal });
      // Counting calls no model: it counts against the key's requests per minute only.
      await admit(request, reply, { tokens: 0, costUsd: 0 });
      const native = call.through('messages');
      if (native !== undefined) request.call.passesThrough(request.principal, messagesUpstreamObjects(body));
      const inputTokens =
        native === undefined
          ? estimateInputTokens(body)
          : await native.invoke((messages, attempt) => messages.countTokens({ ...nativeCallOf(request, reply, body), ...attempt }));
      return sendJsonText(reply, { input_tokens: inputTokens });
    },
  );
};
