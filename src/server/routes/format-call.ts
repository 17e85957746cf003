import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CheckedCall } from '../../calls/index.js';
import type { ApiFormat, DecodedCall } from '../../formats/index.js';
import { estimateTokens } from '../../limits/index.js';
import type { GatewayContext } from '../context.js';
import { admitCall, bodyBytes, connectionGoneSignal, recordFailure, sendLoggedJson } from './model-call.js';
import { sendEventStream } from './stream-relay.js';

/**
 * A format's own way to answer an admitted call (a provider that speaks the format itself),
 * or undefined to answer through the internal chat call.
 */
export type NativeAnswer<D extends DecodedCall> = (call: CheckedCall<'chat'>, decoded: D) => Promise<FastifyReply> | undefined;

/**
 * Answers a request of a public API format through the one model call: decode, admit (resolve,
 * allow-list, input policy, reserve), call the provider's chat capability and encode its
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
  const { record } = request;
  try {
    const decoded = format.decodeRequest(body, request.jsonBytes);
    record.streaming = decoded.stream;
    const call = await admitCall(
      request,
      reply,
      context,
      { mode: 'chat', model: decoded.model, capability: 'chat', providerHint: decoded.providerHint, messages: decoded.body.messages as unknown[] },
      ({ target, media }) => {
        // Media is priced by the provider per image or page, not per base64 byte.
        const promptBytes = bodyBytes(request) - ((media?.bytes ?? 0) * 4) / 3;
        return estimateTokens(target.resolved.model.entry.pricing, promptBytes, decoded.maxOutputTokens, decoded.choices);
      },
    );
    const answered = native?.(call, decoded);
    if (answered !== undefined) return await answered;
    const providerCall = { body: decoded.body, sourceJson: decoded.sourceJson, signal: connectionGoneSignal(reply), requestId: request.id };
    if (decoded.stream) {
      const stream = await call.invoke((chat, upstreamModel) => chat.stream({ ...providerCall, upstreamModel }));
      const encoder = format.streamEncoder(decoded, { transcriptCharacters: transcriptCharactersOf(context) });
      return sendEventStream(reply, stream, encoder, { requestId: request.id, signal: providerCall.signal, record });
    }
    const result = await call.invoke((chat, upstreamModel) => chat.complete({ ...providerCall, upstreamModel }));
    record.usage = result.usage;
    return sendLoggedJson(request, reply, await format.encodeResponse(result, decoded));
  } catch (error) {
    return recordFailure(request, error);
  }
}

/** Characters of streamed answer text the request log's transcript keeps: none when it keeps no payloads. */
export function transcriptCharactersOf(context: GatewayContext): number {
  return context.config.logs.payloads ? context.config.logs.maxPayloadBytes : 0;
}
