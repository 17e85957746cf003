import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { CheckedCall } from '../../calls/index.js';
import { GatewayError } from '../../errors/index.js';
import {
  decodeResponsesRequest,
  encodeResponse,
  inputItemsOf,
  newResponsesId,
  policyMessagesOf,
  responseSkeleton,
  ResponsesPassThroughEncoder,
  ResponsesStreamEncoder,
} from '../../formats/responses/index.js';
import { estimateTokens } from '../../limits/index.js';
import type { JsonObject } from '../../providers/index.js';
import type { StoredResponse } from '../../responses/index.js';
import type { RouteModule } from '../app.js';
import type { GatewayContext } from '../context.js';
import { Nullable } from './schema-helpers.js';
import { sendEventStream, type StreamEncoder } from './responses-stream.js';
import { admitCall, bodyBytes, connectionGoneSignal, ERROR_RESPONSES, MODEL_ROUTE_SCHEMA, recordFailure, sendJsonText, sendLoggedJson, upstreamBody } from './model-call.js';

/**
 * OpenAI's Responses API over every chat model: `POST /v1/responses` (JSON or SSE),
 * `GET` and `DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`. A model of a
 * provider with its own Responses API goes there with the body intact; any other is
 * translated to a chat call (src/formats/responses). Stored responses belong to their key.
 */

/**
 * The Responses request. Fields beyond these (tools, tool_choice, text, parallel_tool_calls,
 * reasoning, include, …) are accepted: passed on intact to a provider with its own Responses
 * API, translated for the others (a field with no equivalent is a 400 naming it).
 */
const ResponsesRequest = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'A chat model id or alias from GET /v1/models' }),
    input: Type.Union([Type.String(), Type.Array(Type.Unknown())], {
      description: 'A string, or input items: messages (input_text, input_image, input_file parts), function_call and function_call_output items',
    }),
    instructions: Type.Optional(Nullable(Type.String())),
    stream: Type.Optional(Nullable(Type.Boolean({ description: 'true: server-sent events of the Responses API, ending with response.completed' }))),
    store: Type.Optional(Nullable(Type.Boolean({ description: 'Keep the response for GET /v1/responses/{id} and previous_response_id (default true)' }))),
    previous_response_id: Type.Optional(Nullable(Type.String({ minLength: 1, description: 'Continue the conversation of a stored response made with the same key' }))),
    max_output_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
    top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    metadata: Type.Optional(Nullable(Type.Record(Type.String(), Type.String({ maxLength: 512 }), { maxProperties: 16 }))),
    provider: Type.Optional(Type.String({ minLength: 1, description: 'Only for a future model id that would otherwise be ambiguous' })),
  },
  { additionalProperties: true },
);

type ResponsesBody = Static<typeof ResponsesRequest> & JsonObject;

const ResponseObject = Type.Object(
  { id: Type.String(), object: Type.Literal('response'), status: Type.String(), model: Type.String(), output: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true },
);

const ResponseId = Type.Object({ id: Type.String({ minLength: 1, description: 'A response id (resp_…) returned to the same key' }) });

const InputItemsQuery = Type.Object({
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  after: Type.Optional(Type.String({ minLength: 1, description: 'An item id: the page starts after it' })),
  include: Type.Optional(Type.Unknown()),
});

/** The same 404 for an unknown id, another key's and a deleted or expired one. */
function responseNotFound(id: string, param: string | null): GatewayError {
  return new GatewayError('not_found', `No response with id ${id} for this API key: it was never stored (store: false), was deleted, expired, or belongs to another key.`, {
    param,
  });
}

/** Whose stored responses a caller sees: its key's (every anonymous caller's while keys are not required). */
function ownerOf(request: FastifyRequest): string {
  const { principal } = request;
  return principal.kind === 'key' ? principal.keyId : 'anonymous';
}

async function storedResponse(context: GatewayContext, request: FastifyRequest, id: string, param: string | null): Promise<StoredResponse> {
  const stored = await context.responses.find(id, ownerOf(request));
  if (stored === null) throw responseNotFound(id, param);
  return stored;
}

/** The conversation a stored response continues into: its input items, then its output. */
function historyOf(stored: StoredResponse | null): JsonObject[] {
  if (stored === null) return [];
  const output = Array.isArray(stored.response.output) ? (stored.response.output as JsonObject[]) : [];
  return [...stored.inputItems, ...output];
}

/** What a create request needs besides its body, gathered before the provider call. */
interface CreateTurn {
  body: ResponsesBody;
  previous: StoredResponse | null;
  history: JsonObject[];
  input: JsonObject[];
  signal: AbortSignal;
  /** Keeps the finished response when the caller asked to (store is true by default). */
  persist(response: JsonObject | null, native: boolean): Promise<void>;
}

export const responsesRoutes: RouteModule = (app, context) => {
  app.post(
    '/v1/responses',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Create a model response',
        description: "OpenAI's Responses API over every chat model: input items, function tools, structured output, stored responses and previous_response_id.",
        body: ResponsesRequest,
        response: {
          200: {
            description: 'A response object, or with stream: true server-sent events (response.created … response.completed)',
            content: { 'application/json': { schema: ResponseObject }, 'text/event-stream': { schema: Type.String({ description: 'event: <type>\\ndata: {…, "sequence_number"}' }) } },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request, reply) => {
      const body = request.body as ResponsesBody;
      const { record } = request;
      record.mode = 'chat';
      record.requestPayload = body;
      record.streaming = body.stream === true;
      try {
        const previous = typeof body.previous_response_id === 'string' ? await storedResponse(context, request, body.previous_response_id, 'previous_response_id') : null;
        const history = historyOf(previous);
        const input = inputItemsOf(body.input);
        const call = await admitCall(
          request,
          reply,
          context,
          { mode: 'chat', model: body.model, capability: 'chat', providerHint: body.provider, messages: policyMessagesOf([...history, ...input]) },
          ({ target, media }) => {
            const promptBytes = bodyBytes(request) + (previous === null ? 0 : JSON.stringify(history).length) - ((media?.bytes ?? 0) * 4) / 3;
            return estimateTokens(target.resolved.model.entry.pricing, promptBytes, body.max_output_tokens ?? null, 1);
          },
        );
        const owner = ownerOf(request);
        const turn: CreateTurn = {
          body,
          previous,
          history,
          input,
          signal: connectionGoneSignal(reply),
          persist: async (response, native) => {
            if (body.store === false || response === null || typeof response.id !== 'string') return;
            await context.responses.save({ id: response.id, owner, createdAt: Date.now(), model: body.model, native, response, inputItems: [...history, ...input] });
          },
        };
        const native = call.as('responses');
        return await (native === null ? translatedTurn(request, reply, call, turn) : nativeTurn(request, reply, native, turn));
      } catch (error) {
        return recordFailure(request, error);
      }
    },
  );

  app.get(
    '/v1/responses/:id',
    {
      config: { scope: 'model:request' },
      schema: { ...MODEL_ROUTE_SCHEMA, summary: 'Retrieve a stored response', params: ResponseId, response: { 200: ResponseObject, ...ERROR_RESPONSES } },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof ResponseId>;
      const stored = await storedResponse(context, request, id, null);
      return sendJsonText(reply, stored.response);
    },
  );

  app.delete(
    '/v1/responses/:id',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Delete a stored response',
        params: ResponseId,
        response: { 200: Type.Object({ id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) }), ...ERROR_RESPONSES },
      },
    },
    async (request) => {
      const { id } = request.params as Static<typeof ResponseId>;
      if (!(await context.responses.delete(id, ownerOf(request)))) throw responseNotFound(id, null);
      return { id, object: 'response' as const, deleted: true as const };
    },
  );

  app.get(
    '/v1/responses/:id/input_items',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: "List a stored response's input items",
        description: 'The conversation the response answered (earlier turns of previous_response_id included), newest first by default.',
        params: ResponseId,
        querystring: InputItemsQuery,
        response: ERROR_RESPONSES,
      },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof ResponseId>;
      const query = request.query as Static<typeof InputItemsQuery>;
      const stored = await storedResponse(context, request, id, null);
      const items = query.order === 'asc' ? stored.inputItems : [...stored.inputItems].reverse();
      const start = query.after === undefined ? 0 : items.findIndex((item) => item.id === query.after) + 1;
      const page = items.slice(start, start + (query.limit ?? 20));
      const list = { object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + page.length < items.length };
      return sendJsonText(reply, list);
    },
  );
};

/** A provider without its own Responses API: the request as a chat call, the answer encoded back. */
async function translatedTurn(request: FastifyRequest, reply: FastifyReply, call: CheckedCall<'chat'>, turn: CreateTurn): Promise<FastifyReply> {
  const { body, record } = { body: turn.body, record: request.record };
  const decoded = decodeResponsesRequest(body, { history: turn.history, input: turn.input });
  if (decoded.dropped.length > 0) record.extra = { ...record.extra, dropped_fields: decoded.dropped };
  const skeleton = responseSkeleton(body, { id: newResponsesId('resp'), createdAt: Math.floor(Date.now() / 1000), model: body.model });
  const providerCall = { body: decoded.chat, signal: turn.signal, requestId: request.id };
  if (body.stream === true) {
    const stream = await call.invoke((chat, upstreamModel) => chat.stream({ ...providerCall, upstreamModel }));
    return streamTurn(request, reply, stream, new ResponsesStreamEncoder(skeleton), turn, false);
  }
  const result = await call.invoke((chat, upstreamModel) => chat.complete({ ...providerCall, upstreamModel }));
  record.usage = result.usage;
  const response = encodeResponse(skeleton, result.completion, result.usage);
  await turn.persist(response, false);
  return sendLoggedJson(request, reply, response);
}

/**
 * A provider with its own Responses API: the body as sent. A conversation it made itself it
 * continues by `previous_response_id`; one another provider made is sent as items.
 */
async function nativeTurn(request: FastifyRequest, reply: FastifyReply, call: CheckedCall<'responses'>, turn: CreateTurn): Promise<FastifyReply> {
  const { body } = turn;
  const { record } = request;
  const continuesOwn = turn.previous === null || turn.previous.native;
  const providerCall = continuesOwn
    ? { body: upstreamBody(body), sourceJson: request.jsonBytes, signal: turn.signal, requestId: request.id }
    : { body: translatedHistoryBody(body, turn.history), signal: turn.signal, requestId: request.id };
  if (body.stream === true) {
    const stream = await call.invoke((responses, upstreamModel) => responses.stream({ ...providerCall, upstreamModel }));
    return streamTurn(request, reply, stream, new ResponsesPassThroughEncoder(body.model), turn, true);
  }
  const result = await call.invoke((responses, upstreamModel) => responses.create({ ...providerCall, upstreamModel }));
  record.usage = result.usage;
  const response = { ...result.response, model: body.model };
  await turn.persist(response, true);
  return sendLoggedJson(request, reply, response);
}

/** The body for a provider that never saw the conversation: its items first, without the ids it would not know. */
function translatedHistoryBody(body: ResponsesBody, history: readonly JsonObject[]): JsonObject {
  const { previous_response_id: _previous, ...rest } = upstreamBody(body);
  const items = history.map(({ id: _id, status: _status, ...item }) => item);
  return { ...rest, input: [...items, ...(typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input)] };
}

function streamTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  stream: Parameters<typeof sendEventStream>[1],
  encoder: StreamEncoder,
  turn: CreateTurn,
  native: boolean,
): FastifyReply {
  return sendEventStream(reply, stream, encoder, {
    signal: turn.signal,
    record: request.record,
    beforeLastFrames: (response) =>
      turn.persist(response, native).catch((error: unknown) => request.log.error({ err: error }, 'storing a streamed response failed; it cannot be retrieved')),
  });
}
