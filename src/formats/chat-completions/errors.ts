import type { GatewayError } from '../../errors/index.js';
import type { EncodedError } from '../types.js';

/** Errors as chat completions, and every route that names no other format, answer them: the gateway's error body (docs/errors.md). */
export function encodeChatError(error: GatewayError, requestId: string): EncodedError {
  return { body: error.toBody(requestId), headers: {} };
}
