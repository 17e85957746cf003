import type { ApiFormat } from '../types.js';
import { encodeGeminiError } from './errors.js';
import { decodeGeminiRequest, type GeminiDecodedCall, type GeminiRequest } from './request.js';
import { encodeGeminiResponse } from './response.js';
import { GeminiStreamEncoder } from './stream.js';

export { estimateGeminiTokens } from './count.js';
export { decodeEmbedRequests, embeddingsOf } from './embed.js';
export type { GeminiEmbedRequest } from './embed.js';
export { geminiErrorBody } from './errors.js';
export { StreamFraming } from './framing.js';
export { geminiModelOf, geminiModelPage } from './models.js';
export type { ListedModel } from './models.js';
export { NativeGeminiStreamEncoder } from './native-stream.js';
export { refuseUntranslatable as refuseUntranslatableGemini } from './request.js';
export type { GeminiBody, GeminiDecodedCall, GeminiRequest } from './request.js';

/** A decoded Gemini API call that knows how its stream is framed (`?alt=sse`). */
export interface GeminiFramedCall extends GeminiDecodedCall {
  sse: boolean;
}

/**
 * Google's Gemini API (generateContent, streamGenerateContent) over the internal chat call.
 * The model and the method come from the path, so the format's request is what the route read
 * of the path and the body (GeminiRequest). A provider that speaks the API natively gets the
 * body as sent instead (the route asks the provider), its stream passed through
 * NativeGeminiStreamEncoder. Clients send the key in `x-goog-api-key` or `?key=`.
 */
export const geminiFormat: ApiFormat<GeminiRequest & { sse: boolean }, GeminiFramedCall> = {
  name: 'gemini-api',
  credentials: { headers: ['x-goog-api-key'], query: 'key' },
  decodeRequest: (request) => ({ ...decodeGeminiRequest(request), sse: request.sse }),
  encodeResponse: (result, decoded) => encodeGeminiResponse(result, decoded.model),
  streamEncoder: (decoded, options) => new GeminiStreamEncoder(decoded.model, decoded.sse, options),
  encodeError: encodeGeminiError,
};
