import type { GatewayError } from '../../errors/index.js';
import type { EncodedError } from '../types.js';

/** Anthropic's error type for each status the gateway answers with (its errors page). */
function errorTypeOf(status: number): string {
  switch (status) {
    case 400:
    case 409:
    case 415:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    default:
      return 'api_error';
  }
}

/** The Messages API's error body: `{"type":"error","error":{"type","message"},"request_id"}`. */
export function messagesErrorBody(error: GatewayError, requestId: string): { type: 'error'; error: { type: string; message: string }; request_id: string } {
  return { type: 'error', error: { type: errorTypeOf(error.status), message: error.message }, request_id: requestId };
}

/** Errors on the Messages paths: Anthropic's body, and the request id in `request-id` as well (its SDKs read it there). */
export function encodeMessagesError(error: GatewayError, requestId: string): EncodedError {
  return { body: messagesErrorBody(error, requestId), headers: { 'request-id': requestId } };
}

/** An `event: error` frame: how the Messages API reports a failure inside a 200 stream. */
export function errorFrame(error: GatewayError, requestId: string): string {
  return `event: error\ndata: ${JSON.stringify(messagesErrorBody(error, requestId))}\n\n`;
}
