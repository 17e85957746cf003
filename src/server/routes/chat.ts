import { Type } from '@sinclair/typebox';
import { chatCompletionsFormat, type ChatCompletionBody } from '../../formats/index.js';
import type { RouteModule } from '../app.js';
import { answerInFormat } from './format-call.js';
import { Nullable } from './schema-helpers.js';
import { ERROR_RESPONSES, MODEL_ROUTE_SCHEMA } from './model-call.js';

const Message = Type.Object(
  {
    role: Type.String({
      minLength: 1,
      description: 'system, developer, user, assistant, tool (function); a role the gateway does not know yet goes to an OpenAI-compatible provider as sent, and is refused by a translation',
    }),
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
      config: { scope: 'model:request', format: chatCompletionsFormat },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Create a chat completion',
        description: 'OpenAI-compatible chat completions, streaming and multimodal, through whichever provider serves the model.',
        body: ChatCompletionRequest,
        response: { 200: ChatCompletionResponses, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as ChatCompletionBody;
      request.call.describe({ mode: 'chat', payload: body });
      return answerInFormat(request, reply, context, chatCompletionsFormat, body);
    },
  );
};
