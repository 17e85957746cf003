export { decodeResponsesRequest, inputItemsOf, policyMessagesOf } from './request-decoder.js';
export type { DecodedResponsesRequest, ResponsesConversation } from './request-decoder.js';
export { encodeResponse, finishedResponse, outputOfCompletion, responseSkeleton, responsesUsage } from './response-encoder.js';
export type { FinishReason, ResponseIdentity } from './response-encoder.js';
export { ResponsesStreamEncoder } from './stream-encoder.js';
export { newResponsesId } from './ids.js';
export { ResponsesPassThroughEncoder } from './pass-through-encoder.js';
