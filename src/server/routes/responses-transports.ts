import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CheckedCall } from '../../calls/index.js';
import { GatewayError, invalidBody } from '../../errors/index.js';
import { estimateInputTokens, responsesFormat, responsesUpstreamObjects, upstreamBody, type MessagesBody, type ResponsesBody, type ResponsesDecodedCall } from '../../formats/index.js';
import { estimateTokens } from '../../limits/index.js';
import type { ChatCompletionResult, JsonObject, TokenUsage } from '../../model-api/index.js';
import type { RouteModule } from '../app.js';
import { admit, bodyBytes, connectionGoneSignal, ERROR_RESPONSES, MODEL_ROUTE_SCHEMA, sendJsonText, sendLoggedJson, servedHeaders } from './model-call.js';

/**
 * The Responses API's transports besides `POST /v1/responses` that coding agents use, over
 * every chat model (docs/client-apis.md, decisions/0025):
 * - `POST /v1/responses/input_tokens`: OpenAI's own count for its models, the vendor's count
 *   endpoint where it has one (Anthropic count_tokens, Gemini countTokens), else an estimate;
 * - `POST /v1/responses/compact`: OpenAI's own compaction for its models; for the others the
 *   target model itself summarises the conversation, in one call of the one model-call path;
 * - `GET /v1/responses` asking for a WebSocket (OpenAI's Responses WebSocket mode):
 *   426 Upgrade Required, so the client goes on over HTTP.
 */

const CountOrCompactRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'A chat model id or alias from GET /v1/models' }),
    input: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))], { description: 'A string, or input items as POST /v1/responses takes them' })),
    instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    provider: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: true },
);

const InputTokensResponse = Type.Object({ object: Type.Literal('response.input_tokens'), input_tokens: Type.Integer() });

const CompactionResponse = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('response.compaction'),
    created_at: Type.Integer(),
    output: Type.Array(Type.Object({}, { additionalProperties: true })),
    usage: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: true },
);

/** What the target model is asked to do with the conversation when it compacts it. */
const COMPACTION_PROMPT = [
  'Summarise the conversation above for a continuation in which only this summary and the user messages are kept.',
  'Keep every fact, decision, file path, command and its outcome, open task and constraint that the work still needs;',
  'leave out pleasantries. Answer with the summary only.',
].join(' ');

/** The fields of a Responses body a count or a compaction needs: the conversation, not its tools or tuning. */
function conversationOf(body: ResponsesBody): ResponsesBody {
  const { model, input, instructions, provider } = body;
  return { model, input: input ?? [], ...(instructions !== undefined ? { instructions } : {}), ...(provider !== undefined ? { provider } : {}) } as ResponsesBody;
}

/** The conversation as the internal chat call (`untranslatable` says what has no chat equivalent). */
function decodeConversation(body: ResponsesBody): ResponsesDecodedCall {
  return responsesFormat.decodeRequest({ body: { ...conversationOf(body), stream: false, store: false } as ResponsesBody, history: [], keep: async () => {} }, undefined);
}

/** A call translated to the internal chat call: refused for what has no chat equivalent, and for a conversation stored by id. */
function translatable(body: ResponsesBody, decoded: ResponsesDecodedCall): void {
  if (decoded.untranslatable !== null) throw decoded.untranslatable;
  if (typeof body.previous_response_id === 'string') {
    throw invalidBody('Send the conversation as input items: this endpoint does not read previous_response_id for a model of this provider.', 'previous_response_id');
  }
}

/**
 * The estimate of a Responses body's input tokens (estimateInputTokens' rule: a token per four
 * characters of text, a fixed count per image or file): its images and files are counted as
 * such, not as the characters of their base64.
 */
function estimatedInputTokens(body: ResponsesBody): number {
  const media = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(media);
    if (typeof value !== 'object' || value === null) return value;
    const part = value as JsonObject;
    if (part.type === 'input_image' || part.type === 'input_file') return { type: part.type === 'input_image' ? 'image' : 'document' };
    return Object.fromEntries(Object.entries(part).map(([key, member]) => [key, media(member)]));
  };
  const content = typeof body.input === 'string' ? body.input : media(body.input ?? []);
  const system = typeof body.instructions === 'string' ? body.instructions : undefined;
  return estimateInputTokens({ model: body.model, max_tokens: 1, messages: [{ role: 'user', content }], ...(system !== undefined ? { system } : {}), ...(Array.isArray(body.tools) ? { tools: body.tools } : {}) } as MessagesBody);
}

/** The check every count and compaction starts with: resolve, allow-list, input policy. */
function checkedCall(request: FastifyRequest, reply: FastifyReply, body: ResponsesBody, messages: unknown[]): CheckedCall<'chat'> {
  return request.call.check({
    mode: 'chat',
    model: body.model,
    capability: 'chat',
    providerHint: typeof body.provider === 'string' ? body.provider : undefined,
    messages,
    allowedFor: request.principal,
    onServed: servedHeaders(reply),
  });
}

async function countInputTokens(request: FastifyRequest, reply: FastifyReply, body: ResponsesBody): Promise<number> {
  const decoded = decodeConversation(body);
  const call = checkedCall(request, reply, body, decoded.body.messages as unknown[]);
  const own = call.through('responses');
  if (own !== undefined) request.call.passesThrough(request.principal, responsesUpstreamObjects(body));
  // Counting calls no model: it counts against the key's requests per minute only.
  await admit(request, reply, { tokens: 0, costUsd: 0 });
  const signal = connectionGoneSignal(reply);
  if (own !== undefined) {
    return own.invoke((responses, attempt) => responses.countInputTokens({ body: upstreamBody(body), sourceJson: request.jsonBytes, signal, requestId: request.id, ...attempt }), signal);
  }
  translatable(body, decoded);
  const estimate = estimatedInputTokens(body);
  return call.invoke((chat, attempt) => chat.countTokens?.({ body: decoded.body, signal, requestId: request.id, ...attempt }) ?? Promise.resolve(estimate), signal);
}

/** The Responses API's usage object of a compaction made through the internal chat call. */
function responsesUsage(usage: TokenUsage | null): JsonObject {
  const input = usage?.promptTokens ?? 0;
  const output = usage?.completionTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.cachedPromptTokens ?? 0 },
    output_tokens: output,
    total_tokens: input + output,
  };
}

/** The text of the internal call's first answer. */
function answerText(result: ChatCompletionResult): string {
  const content = (result.completion.choices as { message?: { content?: unknown } }[] | undefined)?.[0]?.message?.content;
  return typeof content === 'string' ? content : '';
}

/**
 * A compaction by a model without OpenAI's endpoint: the model summarises the conversation,
 * and the compacted conversation is the user's messages as sent followed by that summary as
 * an assistant message. Only OpenAI can read an encrypted `compaction` item, so the summary is
 * plain text, which every model of every vendor takes back in the next request.
 */
async function compact(request: FastifyRequest, reply: FastifyReply, body: ResponsesBody): Promise<FastifyReply> {
  const decoded = decodeConversation(body);
  const checked = checkedCall(request, reply, body, decoded.body.messages as unknown[]);
  const own = checked.through('responses');
  const messages = own === undefined ? [...(decoded.body.messages as JsonObject[]), { role: 'user', content: COMPACTION_PROMPT }] : (decoded.body.messages as JsonObject[]);
  if (own === undefined) translatable(body, decoded);
  else request.call.passesThrough(request.principal, responsesUpstreamObjects(body));
  const call = own ?? checked.withMessages(messages);
  const estimate = estimateTokens(call.target.resolved.model.entry.pricing, bodyBytes(request) - ((call.media?.bytes ?? 0) * 4) / 3, null);
  await admit(request, reply, estimate);
  call.reserved(estimate);
  const signal = connectionGoneSignal(reply);
  if (own !== undefined) {
    const result = await own.invoke((responses, attempt) => responses.compact({ body: upstreamBody(body), sourceJson: request.jsonBytes, signal, requestId: request.id, ...attempt }), signal);
    return sendLoggedJson(request, reply, result.response);
  }
  const chat = call as CheckedCall<'chat'>;
  const { tools: _tools, tool_choice: _toolChoice, parallel_tool_calls: _parallel, ...chatBody } = decoded.body;
  const result = await chat.invoke((provider, attempt) => provider.complete({ body: { ...chatBody, messages }, signal, requestId: request.id, ...attempt }), signal);
  return sendLoggedJson(request, reply, compactionOf(request.id, decoded, result));
}

/**
 * A compaction by a model without OpenAI's endpoint, in the endpoint's shape: the user's
 * messages as sent, then the model's summary as an assistant message. Only OpenAI can read an
 * encrypted `compaction` item, so the summary is plain text, which every model of every
 * vendor takes back in the next request.
 */
function compactionOf(requestId: string, decoded: ResponsesDecodedCall, result: ChatCompletionResult): JsonObject {
  const id = requestId.replace(/^req_/, '');
  const userMessages = decoded.input.filter((item) => (item.type ?? 'message') === 'message' && item.role === 'user');
  const summary = { id: `msg_${id}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: answerText(result), annotations: [] }] };
  return { id: `resp_${id}`, object: 'response.compaction', created_at: Math.floor(Date.now() / 1000), output: [...userMessages, summary], usage: responsesUsage(result.usage) };
}

export const responsesTransportsRoutes: RouteModule = (app) => {
  const config = { scope: 'model:request' as const, format: responsesFormat };

  app.post(
    '/v1/responses/input_tokens',
    {
      config,
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: "Count a Responses request's input tokens",
        description: "OpenAI's own count for its models; the vendor's count endpoint where it has one (Anthropic, Gemini); an estimate for other providers.",
        body: CountOrCompactRequest,
        response: { 200: InputTokensResponse, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as ResponsesBody;
      request.call.describe({ mode: 'chat', payload: body });
      const inputTokens = await countInputTokens(request, reply, body);
      return sendJsonText(reply, { object: 'response.input_tokens', input_tokens: inputTokens });
    },
  );

  app.post(
    '/v1/responses/compact',
    {
      config,
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Compact a conversation',
        description:
          "OpenAI's own compaction for its models (a compaction item); for other models the model summarises the conversation, answered as the user's messages followed by the summary as an assistant message.",
        body: CountOrCompactRequest,
        response: { 200: CompactionResponse, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as ResponsesBody;
      request.call.describe({ mode: 'chat', payload: body });
      return compact(request, reply, body);
    },
  );

  app.get(
    '/v1/responses',
    {
      config,
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Responses WebSocket mode (not served)',
        description: 'A WebSocket upgrade here (OpenAI\'s Responses WebSocket mode) is answered 426 Upgrade Required: send POST /v1/responses over HTTP instead.',
        response: ERROR_RESPONSES,
      },
    },
    async (_request, reply) => {
      reply.header('upgrade', 'HTTP/1.1');
      throw new GatewayError('upgrade_required', 'The Responses WebSocket mode is not served by this gateway: send POST /v1/responses over HTTP (stream: true for server-sent events).');
    },
  );
};
