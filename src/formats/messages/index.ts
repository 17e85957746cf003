import type { ApiFormat } from '../types.js';
import { encodeMessagesError } from './errors.js';
import { decodeMessagesRequest, type MessagesBody, type MessagesDecodedCall } from './request.js';
import { encodeMessagesResponse } from './response.js';
import { MessagesStreamEncoder } from './stream.js';
import { estimateInputTokens } from './count.js';

export { estimateInputTokens } from './count.js';
export { NativeMessagesStreamEncoder } from './native-stream.js';
export { refuseUntranslatable } from './request.js';
export type { MessagesBody, MessagesDecodedCall } from './request.js';

/**
 * Anthropic's Messages API over the internal chat call. A provider that speaks the API
 * natively gets the request as sent instead (the route asks the provider; the format does
 * not know which one does), its stream passed through NativeMessagesStreamEncoder.
 */
export const messagesFormat: ApiFormat<MessagesBody, MessagesDecodedCall> = {
  name: 'messages',
  decodeRequest: (body) => decodeMessagesRequest(body),
  encodeResponse: (result, decoded) => encodeMessagesResponse(result, decoded.model),
  streamEncoder: (decoded, options) => new MessagesStreamEncoder(decoded.model, options, () => estimateInputTokens(decoded.source)),
  encodeError: encodeMessagesError,
};
