import { Type, type Static } from '@sinclair/typebox';
import { estimateTokens } from '../../limits/index.js';
import type { JsonObject } from '../../providers/index.js';
import type { RouteModule } from '../app.js';
import { sendChatStream } from './chat-stream.js';
import { Nullable } from './schema-helpers.js';
import {
  admitCall,
  bodyBytes,
  connectionGoneSignal,
  ERROR_RESPONSES,
  MODEL_ROUTE_SCHEMA,
  recordFailure,
  sendLoggedJson,
  showRequestedModel,
  upstreamBody,
} from './model-call.js';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];

const Message = Type.Object(
  {
    role: Type.Unsafe<string>({ type: 'string', enum: ROLES }),
    content: Type.Optional(
      Type.Unknown({
        description:
          'A string, or an array of parts: {type: "text", text}, {type: "image_url", image_url: {url}} (https URL or base64 data URI), ' +
          '{type: "file" | "input_file", file: {filename, mime_type, file_data}} (base64 data URI). Null for assistant tool calls.',
      }),
    ),
  },
  { additionalProperties: true },
);

/**
 * The OpenAI chat-completions request. Fields beyond these (tools, tool_choice,
 * response_format, logprobs, n, seed, stop, …) are accepted and passed to the provider as sent.
 * The optional fields take null as "not set", as OpenAI's API and the SDKs' types do.
 */
export const ChatCompletionRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'A model id or alias from GET /v1/models' }),
    messages: Type.Array(Message, { minItems: 1 }),
    stream: Type.Optional(Nullable(Type.Boolean({ description: 'true: server-sent events of chat.completion.chunk, ending with data: [DONE]' }))),
    stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Nullable(Type.Boolean())) }, { additionalProperties: true }))),
    provider: Type.Optional(Type.String({ minLength: 1, description: 'Only for a future model id that would otherwise be ambiguous' })),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    max_completion_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 128 }))),
  },
  { additionalProperties: true },
);

type ChatCompletionBody = Static<typeof ChatCompletionRequest>;

const ChatCompletionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('chat.completion'),
    created: Type.Integer(),
    model: Type.String({ description: 'The model as the caller asked for it' }),
    choices: Type.Array(Type.Object({}, { additionalProperties: true })),
    usage: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
);

const ChatCompletionResponses = {
  description: 'A chat.completion, or with stream: true server-sent events of chat.completion.chunk ending with data: [DONE]',
  content: {
    'application/json': { schema: ChatCompletionResponse },
    'text/event-stream': { schema: Type.String({ description: 'data: {chat.completion.chunk}\\n\\n … data: [DONE]\\n\\n' }) },
  },
};

export const chatRoutes: RouteModule = (app, context) => {
  app.post(
    '/v1/chat/completions',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Create a chat completion',
        description: 'OpenAI-compatible chat completions, streaming and multimodal, through whichever provider serves the model.',
        body: ChatCompletionRequest,
        response: { 200: ChatCompletionResponses, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as ChatCompletionBody & JsonObject;
      const { record } = request;
      record.mode = 'chat';
      record.requestPayload = body;
      record.streaming = body.stream === true;
      try {
        const call = await admitCall(
          request,
          reply,
          context,
          { mode: 'chat', model: body.model, capability: 'chat', providerHint: body.provider, messages: body.messages },
          ({ target, media }) => {
            // Media is priced by the provider per image or page, not per base64 byte.
            const promptBytes = bodyBytes(request) - ((media?.bytes ?? 0) * 4) / 3;
            const replyBudget = body.max_completion_tokens ?? body.max_tokens ?? null;
            return estimateTokens(target.resolved.model.entry.pricing, promptBytes, replyBudget, body.n ?? 1);
          },
        );
        const providerCall = {
          body: upstreamBody(body),
          sourceJson: request.jsonBytes,
          signal: connectionGoneSignal(reply),
          requestId: request.id,
        };
        if (body.stream === true) {
          const stream = await call.invoke((chat, attempt) => chat.stream({ ...providerCall, ...attempt }), providerCall.signal);
          return sendChatStream(reply, stream, {
            requestId: request.id,
            requestedModel: body.model,
            includeUsage: body.stream_options?.include_usage === true,
            signal: providerCall.signal,
            record,
            transcriptCharacters: context.config.logs.payloads ? context.config.logs.maxPayloadBytes : 0,
          });
        }
        const result = await call.invoke((chat, attempt) => chat.complete({ ...providerCall, ...attempt }), providerCall.signal);
        record.usage = result.usage;
        return sendLoggedJson(request, reply, showRequestedModel(result.completion, body.model));
      } catch (error) {
        return recordFailure(request, error);
      }
    },
  );
};
