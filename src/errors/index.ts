export { ERROR_CODES, GatewayError, invalidBody, isGatewayError, statusOf } from './gateway-error.js';
export type { ErrorBody, ErrorCode, ErrorType, GatewayErrorOptions } from './gateway-error.js';
