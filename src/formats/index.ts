export type { ApiFormat, CredentialLocations, DecodedCall, EncodedError, ErrorFormat, StreamEncoder, StreamEncoderOptions } from './types.js';
export { chatCompletionsFormat } from './chat-completions/index.js';
export type { ChatCompletionBody, ChatDecodedCall } from './chat-completions/index.js';
export { showRequestedModel, upstreamBody } from './openai-bodies.js';
export { FinishedItemEvents, inputItemsOf, namesGatewayMcpServer, mcpCallItem, mcpListToolsItem, newResponsesId, responseSkeleton, responsesFormat, ResponsesPassThroughEncoder, toolLoopResponse } from './responses/index.js';
export type { McpToolRequest, ResponsesBody, ResponsesDecodedCall, ResponsesTurn } from './responses/index.js';
export { estimateInputTokens, messagesFormat, NativeMessagesStreamEncoder, refuseUntranslatable } from './messages/index.js';
export type { MessagesBody, MessagesDecodedCall } from './messages/index.js';
export { fitExtensions } from './extensions.js';
export type { ModelAbilities } from './extensions.js';
export type { UpstreamObjectKind, UpstreamObjectRef } from './types.js';
export { responsesUpstreamObjects } from './responses/upstream-objects.js';
export { messagesUpstreamObjects } from './messages/upstream-objects.js';
export { geminiUpstreamObjects } from './gemini/upstream-objects.js';
export {
  decodeEmbedRequests,
  embeddingsOf,
  estimateGeminiTokens,
  geminiErrorBody,
  geminiFormat,
  geminiModelOf,
  geminiModelPage,
  NativeGeminiStreamEncoder,
  refuseUntranslatableGemini,
  StreamFraming,
} from './gemini/index.js';
export type { GeminiBody, GeminiDecodedCall, GeminiEmbedRequest, GeminiFramedCall, GeminiRequest, ListedModel } from './gemini/index.js';
