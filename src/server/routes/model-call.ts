import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CallRequest, Capability, CheckedCall } from '../../calls/index.js';
import type { ModelMode } from '../../catalog/index.js';
import { GatewayError, invalidBody } from '../../errors/index.js';
import type { Principal } from '../../keys/index.js';
import type { UsageEstimate } from '../../limits/index.js';
import { stringifyProviderValue } from '../../providers/index.js';
import type { JsonObject } from '../../model-api/index.js';
import type { GatewayContext } from '../context.js';

/**
 * The HTTP side of a model endpoint: the OpenAPI parts they share, admission through the
 * model-call path (src/calls) with the rate-limit headers on the reply, the client
 * connection's abort signal, and sending the provider's answer. Routes never name a vendor.
 */

/** Security and tags every model endpoint declares in the OpenAPI document. */
export const MODEL_ROUTE_SCHEMA = {
  tags: ['models'],
  security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
} as const;

/** The error body of docs/errors.md, for the OpenAPI document. */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      message: Type.String(),
      type: Type.String(),
      code: Type.String(),
      param: Type.Union([Type.String(), Type.Null()]),
      request_id: Type.String(),
    }),
  },
  { description: 'OpenAI-shaped error (see docs/errors.md)' },
);

export const ERROR_RESPONSES = { '4xx': ErrorResponse, '5xx': ErrorResponse } as const;

/**
 * Admits a request that makes one model call, through the model-call path: resolve,
 * allow-list, input policy, reserve; the reply carries the rate-limit headers, and once the
 * provider call ended, the model that served it and the number of attempts
 * (`x-modelgate-model`, `x-modelgate-attempts`).
 */
export async function admitCall<C extends Capability>(
  request: FastifyRequest,
  reply: FastifyReply,
  call: Omit<CallRequest<C>, 'allowedFor' | 'onServed'>,
  estimateOf: (call: CheckedCall<C>) => UsageEstimate,
): Promise<CheckedCall<C>> {
  const admitted = await request.call.admit(request.principal, { ...call, allowedFor: request.principal, onServed: servedHeaders(reply) }, estimateOf);
  reply.headers(admitted.admission.headers);
  return admitted.call;
}

/** Puts on the reply which model served a call and after how many attempts (`x-modelgate-model`, `x-modelgate-attempts`). */
export function servedHeaders(reply: FastifyReply): (model: string, attempts: number) => void {
  return (model, attempts) => {
    reply.header('x-modelgate-model', model).header('x-modelgate-attempts', attempts);
  };
}

/**
 * Reserves against the key's limits (of `principal`, by default the caller's own) for a
 * request that calls no model itself (a utility, an agent run whose calls reserve their own),
 * and sets the rate-limit headers.
 */
export async function admit(request: FastifyRequest, reply: FastifyReply, estimate: UsageEstimate, principal: Principal = request.principal): Promise<void> {
  const admission = await request.call.reserve(principal, estimate);
  reply.headers(admission.headers);
}

/** Size of the JSON body as received (no re-serialisation); 0 when unknown. */
export function bodyBytes(request: FastifyRequest): number {
  const length = Number(request.headers['content-length']);
  return Number.isFinite(length) ? length : 0;
}

const connectionSignals = new WeakMap<Socket, AbortSignal>();

/**
 * An AbortSignal that fires when the client's connection closes, so an upstream call made
 * for it is cancelled. One per connection, not per request: an AbortController costs more to
 * make than the rest of a request's bookkeeping, and a keep-alive connection carries many
 * requests one after another. When it closes after a response finished, no call is
 * listening any more. Long-lived, so never a source of AbortSignal.any (Node 20 keeps every
 * dependent signal of a source alive): runs that combine signals use clientGoneSignal.
 */
export function connectionGoneSignal(reply: FastifyReply): AbortSignal {
  const socket = reply.raw.socket;
  if (socket === null) return clientGoneSignal(reply);
  let signal = connectionSignals.get(socket);
  if (signal === undefined) {
    const controller = new AbortController();
    socket.once('close', () => controller.abort(new Error('client disconnected')));
    signal = controller.signal;
    connectionSignals.set(socket, signal);
  }
  return signal;
}

/**
 * An AbortSignal that fires when the client goes away before the response finished, so the
 * upstream call is cancelled. The response's 'close' is used (not the request's, which also
 * fires once the body has been read).
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

/**
 * The one place the fields a translation left out as hints (decisions §9) are told: the
 * request record (`droppedFields`) and the `x-modelgate-dropped` header (comma-separated
 * paths), so the caller and the operator see what the provider never saw.
 */
export function recordDroppedFields(request: FastifyRequest, reply: FastifyReply, fields: readonly string[]): void {
  if (fields.length === 0) return;
  request.call.droppedFields(fields);
  reply.header('x-modelgate-dropped', request.call.droppedSoFar.join(','));
}

/**
 * Refuses `stream: true` on an endpoint whose OpenAI counterpart streams (images,
 * transcriptions) but which the gateway answers whole: the SDKs would read a JSON answer as an
 * event stream and hand the caller no events and no error.
 */
export function refuseStreaming(stream: unknown, path: string): void {
  if (stream === true || stream === 'true') throw invalidBody(`${path} does not stream here; remove stream or set it to false.`, 'stream');
}

/**
 * The model of an endpoint whose `model` the caller may omit (embeddings, images): the
 * catalog's first model of that mode (the gateway's registered embedding / image model).
 */
export function defaultModelOf(context: GatewayContext, mode: ModelMode): string {
  const entry = context.catalog.list().find((candidate) => candidate.mode === mode);
  if (entry === undefined) throw new GatewayError('invalid_body', `model is required: this gateway has no default ${mode} model.`, { param: 'model' });
  return entry.id;
}

/**
 * Sends a provider's JSON response, serialised once here, not re-serialised through the
 * documented response schema (which would drop the fields it does not list).
 */
export function sendJsonText(reply: FastifyReply, json: JsonObject): FastifyReply {
  return reply.type('application/json').send(stringifyProviderValue(json, 'response'));
}

/**
 * Sends a provider's JSON response that is also the logged response payload: serialised once
 * for both. Never the provider's own text in the log: a key written twice parses to its last
 * value only, so the text could hold what redaction of the object never saw.
 */
export function sendLoggedJson(request: FastifyRequest, reply: FastifyReply, json: JsonObject): FastifyReply {
  const text = stringifyProviderValue(json, 'response');
  request.call.answered({ payload: json, json: text });
  return reply.type('application/json').send(text);
}

/** Sends a provider's bytes (audio, transcription text) with their content type, untouched. */
export function sendBytes(reply: FastifyReply, contentType: string, bytes: Buffer): FastifyReply {
  return reply.type(contentType).send(bytes);
}
