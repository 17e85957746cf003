export type { ApiFormat, DecodedCall, EncodedError, ErrorFormat, StreamEncoder, StreamEncoderOptions } from './types.js';
export { chatCompletionsFormat } from './chat-completions/index.js';
export type { ChatCompletionBody, ChatDecodedCall } from './chat-completions/index.js';
export { showRequestedModel, upstreamBody } from './openai-bodies.js';
export { inputItemsOf, responsesFormat, ResponsesPassThroughEncoder } from './responses/index.js';
export type { ResponsesBody, ResponsesDecodedCall, ResponsesTurn } from './responses/index.js';
export { estimateInputTokens, messagesFormat, NativeMessagesStreamEncoder, refuseUntranslatable } from './messages/index.js';
export type { MessagesBody, MessagesDecodedCall } from './messages/index.js';
