import type { FastifyReply, FastifyRequest } from 'fastify';
import { carriesToolResults, semanticPartsOf, type CacheTicket } from '../../cache/index.js';
import type { CheckedCall } from '../../calls/index.js';
import { fitExtensions, type ApiFormat, type DecodedCall } from '../../formats/index.js';
import { estimateTokens } from '../../limits/index.js';
import type { GatewayContext } from '../context.js';
import { bodyBytes, connectionGoneSignal, recordDroppedFields, sendLoggedJson, servedHeaders } from './model-call.js';
import { sendEventStream } from './stream-relay.js';
import { admitCached, cacheTicketFor, storeFalseIn, temperatureOf } from './response-cache.js';

/**
 * Chooses, once the call is checked and before anything is reserved, a format's own way to
 * answer it (a provider that speaks the format itself): the answer to run once admitted, or
 * undefined to answer through the internal chat call. May throw a GatewayError (a field the
 * internal call cannot carry).
 */
export type NativeAnswer<D extends DecodedCall> = (call: CheckedCall<'chat'>, decoded: D) => ((cache: CacheTicket | null) => Promise<FastifyReply>) | undefined;

/**
 * Answers a request of a public API format through the one model call: decode, check (resolve,
 * allow-list, input policy), choose a native answer or the internal call, reserve, call the provider's chat capability and encode its
 * answer or stream in the format. The route has validated the body and says which format.
 */
export async function answerInFormat<B, D extends DecodedCall>(
  request: FastifyRequest,
  reply: FastifyReply,
  context: GatewayContext,
  format: ApiFormat<B, D>,
  body: B,
  native?: NativeAnswer<D>,
): Promise<FastifyReply> {
  const { call: requestCall } = request;
  const decoded = format.decodeRequest(body, request.jsonBytes);
  requestCall.streams(decoded.stream);
  const call = requestCall.check({
    mode: 'chat',
    model: decoded.model,
    capability: 'chat',
    providerHint: decoded.providerHint,
    messages: decoded.body.messages as unknown[],
    allowedFor: request.principal,
    onServed: servedHeaders(reply),
  });
  const answer = native?.(call, decoded) ?? translation(context, call, decoded);
  const isNative = typeof answer === 'function';
  // A provider that speaks the format itself gets the caller's body (and API headers): that is what its answer answers.
  const cache = await cacheTicketFor(request, reply, {
    surface: isNative ? `${format.name}:native` : format.name,
    model: call.target.resolved.id,
    stream: decoded.stream,
    body: isNative ? { request: request.body, beta: request.headers['anthropic-beta'] ?? null } : decoded.body,
    semantic: () => semanticPartsOf(decoded.body, isNative ? { request: outsideTheConversation(request.body), beta: request.headers['anthropic-beta'] ?? null } : null),
    traits: {
      // The decoded body carries the caller's temperature in every format (Gemini's is in generationConfig).
      temperature: temperatureOf(decoded.body),
      storeFalse: storeFalseIn(request.body),
      media: call.media !== null && call.media.images + call.media.files > 0,
      toolResults: carriesToolResults(decoded.body),
    },
  });
  // Media is priced by the provider per image or page, not per base64 byte.
  const promptBytes = bodyBytes(request) + (decoded.storedPromptBytes ?? 0) - ((call.media?.bytes ?? 0) * 4) / 3;
  await admitCached(request, reply, call, cache, () => estimateTokens(call.target.resolved.model.entry.pricing, promptBytes, decoded.maxOutputTokens, decoded.choices));
  if (isNative) return answer(cache);
  const { extensions, dropped } = answer;
  recordDroppedFields(request, reply, dropped);
  const providerCall = { body: decoded.body, sourceJson: decoded.sourceJson, extensions, signal: connectionGoneSignal(reply), requestId: request.id };
  if (decoded.stream) {
    const stream = await call.invoke((chat, attempt) => chat.stream({ ...providerCall, ...attempt }), providerCall.signal, { cache });
    const counted = { body: decoded.body, upstreamModel: call.target.resolved.model.upstreamId };
    const promptTokens = () => call.target.capability.countPromptTokens?.(counted) ?? null;
    const encoder = format.streamEncoder(decoded, { transcriptCharacters: transcriptCharactersOf(context), promptTokens });
    return sendEventStream(reply, stream, encoder, { requestId: request.id, signal: providerCall.signal, call: requestCall });
  }
  const result = await call.invoke((chat, attempt) => chat.complete({ ...providerCall, ...attempt }), providerCall.signal, { cache });
  return sendLoggedJson(request, reply, await format.encodeResponse(result, decoded));
}

/** The members of the public formats' bodies that hold the conversation (Messages, Gemini, Responses): the decoded chat body carries it. */
const CONVERSATION_MEMBERS = new Set(['messages', 'system', 'contents', 'systemInstruction', 'input', 'instructions']);

/** A body a provider gets as sent, without its conversation: what a semantic policy requires equal beside the decoded conversation. */
function outsideTheConversation(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  return Object.fromEntries(Object.entries(body).filter(([name]) => !CONVERSATION_MEMBERS.has(name)));
}

/**
 * What of the caller's request a translated call leaves out and what it keeps beside the chat
 * body: the format's dropped fields, the extensions the model cannot take (or the refusal of one
 * it must), and the hints the provider has no equivalent for. Decided before anything is reserved.
 */
export function translation(context: GatewayContext, call: CheckedCall<'chat'>, decoded: DecodedCall): { extensions: DecodedCall['extensions']; dropped: string[] } {
  const abilities = call.target.resolved.model.features;
  const searchModels = () => context.catalog.webSearchModels();
  const fitted = fitExtensions(decoded.extensions, abilities, searchModels);
  const hints = call.target.capability.hintsDropped?.(decoded.body, fitted.extensions, call.target.resolved.model.upstreamId) ?? [];
  const dropped = fitted.dropped.length === 0 && hints.length === 0 ? decoded.dropped : [...decoded.dropped, ...fitted.dropped, ...hints];
  return { extensions: fitted.extensions, dropped };
}

/** Characters of streamed answer text the request log's transcript keeps: none when it keeps no payloads. */
export function transcriptCharactersOf(context: GatewayContext): number {
  return context.config.logs.payloads ? context.config.logs.maxPayloadBytes : 0;
}
