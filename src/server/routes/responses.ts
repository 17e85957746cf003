import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { CheckedCall } from '../../calls/index.js';
import { GatewayError, invalidBody } from '../../errors/index.js';
import {
  inputItemsOf,
  namesGatewayMcpServer,
  responsesFormat,
  ResponsesPassThroughEncoder,
  upstreamBody,
  type ResponsesBody,
  type ResponsesDecodedCall,
  type ResponsesTurn,
} from '../../formats/index.js';
import type { JsonObject } from '../../model-api/index.js';
import type { StoredResponse } from '../../responses/index.js';
import type { RouteModule } from '../app.js';
import type { GatewayContext } from '../context.js';
import { answerInFormat } from './format-call.js';
import { mcpToolLoopAnswer } from './responses-mcp.js';
import { connectionGoneSignal, ERROR_RESPONSES, MODEL_ROUTE_SCHEMA, sendJsonText, sendLoggedJson } from './model-call.js';
import { Nullable } from './schema-helpers.js';
import { sendEventStream } from './stream-relay.js';

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

const ResponseObject = Type.Object(
  { id: Type.String(), object: Type.Literal('response'), status: Type.String(), model: Type.String(), output: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true },
);

const ResponseId = Type.Object({ id: Type.String({ minLength: 1, description: 'A response id (resp_…) returned to the same key' }) });

const RetrieveQuery = Type.Object({
  stream: Type.Optional(Type.Unknown({ description: 'Not served: a stored response is returned whole, not replayed as events' })),
  include: Type.Optional(Type.Unknown()),
});

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

export const responsesRoutes: RouteModule = (app, context) => {
  app.post(
    '/v1/responses',
    {
      config: { scope: 'model:request', format: responsesFormat },
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
      request.call.describe({ mode: 'chat', payload: body });
      // A background response would be finished (and stored) after this request ended, out of the gateway's sight.
      if (body.background === true) throw invalidBody('Background responses are not served here: leave background out and the answer comes in this request (stream: true for events).', 'background');
      const previous = typeof body.previous_response_id === 'string' ? await storedResponse(context, request, body.previous_response_id, 'previous_response_id') : null;
      const keeper = keeperOf(context, request, body, previous);
      const turn: ResponsesTurn = { body, history: historyOf(previous), keep: keeper(false) };
      return answerInFormat(request, reply, context, responsesFormat, turn, (call, decoded) => {
        // The gateway's own MCP servers: the loop runs here for every model, so no upstream ever reaches them.
        if (decoded.mcp.length > 0 || namesGatewayMcpServer(body)) {
          if (decoded.untranslatable !== null) throw decoded.untranslatable;
          return mcpToolLoopAnswer(request, reply, context, call, decoded);
        }
        const own = call.through('responses');
        if (own !== undefined) return () => nativeAnswer(request, reply, own, decoded, { continuesOwn: previous === null || previous.native, keep: keeper(true) });
        if (decoded.untranslatable !== null) throw decoded.untranslatable;
        return undefined;
      });
    },
  );

  app.get(
    '/v1/responses/:id',
    {
      config: { scope: 'model:request', format: responsesFormat },
      schema: { ...MODEL_ROUTE_SCHEMA, summary: 'Retrieve a stored response', params: ResponseId, querystring: RetrieveQuery, response: { 200: ResponseObject, ...ERROR_RESPONSES } },
    },
    async (request, reply) => {
      const { id } = request.params as Static<typeof ResponseId>;
      const { stream } = request.query as Static<typeof RetrieveQuery>;
      if (stream === true || stream === 'true') {
        throw invalidBody('A stored response is returned whole here, not replayed as events: leave stream out.', 'stream');
      }
      const stored = await storedResponse(context, request, id, null);
      return sendJsonText(reply, stored.response);
    },
  );

  app.delete(
    '/v1/responses/:id',
    {
      config: { scope: 'model:request', format: responsesFormat },
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
      config: { scope: 'model:request', format: responsesFormat },
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

/**
 * Keeps a finished response for its key unless the caller said `store: false`: with the
 * conversation it continued and its own input items, and whether the provider's own
 * Responses API made it. A failure to store is logged; the caller still gets its answer
 * (retrieving or continuing it is then a 404).
 */
function keeperOf(context: GatewayContext, request: FastifyRequest, body: ResponsesBody, previous: StoredResponse | null): (native: boolean) => ResponsesTurn['keep'] {
  const owner = ownerOf(request);
  return (native) => async (response) => {
    if (body.store === false || typeof response.id !== 'string') return;
    try {
      const inputItems = [...historyOf(previous), ...inputItemsOf(body.input)];
      await context.responses.save({ id: response.id, owner, createdAt: Date.now(), model: body.model, native, response, inputItems });
    } catch (error) {
      request.log.error({ err: error }, 'storing a response failed; it cannot be retrieved or continued');
    }
  };
}

/**
 * A provider with its own Responses API: the body as sent. A conversation it made itself it
 * continues by `previous_response_id`; one another provider made is sent as items.
 */
async function nativeAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  call: CheckedCall<'responses'>,
  decoded: ResponsesDecodedCall,
  options: { continuesOwn: boolean; keep: ResponsesTurn['keep'] },
): Promise<FastifyReply> {
  const { body, history } = decoded.turn;
  const signal = connectionGoneSignal(reply);
  const providerCall = options.continuesOwn
    ? { body: upstreamBody(body), sourceJson: request.jsonBytes, signal, requestId: request.id }
    : { body: withHistory(body, history), signal, requestId: request.id };
  if (decoded.stream) {
    const stream = await call.invoke((responses, attempt) => responses.stream({ ...providerCall, ...attempt }), signal);
    const encoder = new ResponsesPassThroughEncoder({ requestedModel: body.model, keep: options.keep });
    return sendEventStream(reply, stream, encoder, { requestId: request.id, signal, call: request.call });
  }
  const result = await call.invoke((responses, attempt) => responses.create({ ...providerCall, ...attempt }), signal);
  const response = { ...result.response, model: body.model };
  await options.keep(response);
  return sendLoggedJson(request, reply, response);
}

/** The body for a provider that never saw the conversation: its items first, without the ids it would not know. */
function withHistory(body: ResponsesBody, history: readonly JsonObject[]): JsonObject {
  const { previous_response_id: _previous, ...rest } = upstreamBody(body);
  const items = history.map(({ id: _id, status: _status, ...item }) => item);
  return { ...rest, input: [...items, ...(typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input)] };
}
