export { ERROR_CODES, GatewayError, invalidBody, isGatewayError, unsupportedField, statusOf } from './gateway-error.js';
export type { ErrorBody, ErrorCode, ErrorType, GatewayErrorOptions, ProviderFault, UpstreamFacts } from './gateway-error.js';
export { withArticle } from './wording.js';
