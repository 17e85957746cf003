import type { GatewayError } from '../../errors/index.js';
import type { EncodedError } from '../types.js';

/** The google.rpc.Code name Google's APIs give each HTTP status (its error model). */
export function statusNameOf(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 426:
      return 'FAILED_PRECONDITION';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return 'INTERNAL';
  }
}

/**
 * The Gemini API's error body, `{"error": {"code", "message", "status", "details"}}`: the §4
 * status as `code`, its google.rpc name as `status`, and an ErrorInfo detail carrying the
 * gateway's own code and the request id (what Google's clients show of an error's details).
 */
export function geminiErrorBody(error: GatewayError, requestId: string): { error: { code: number; message: string; status: string; details: object[] } } {
  return {
    error: {
      code: error.status,
      message: error.message,
      status: statusNameOf(error.status),
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: error.code.toUpperCase(), domain: 'modelgate', metadata: { request_id: requestId, ...(error.param === null ? {} : { param: error.param }) } }],
    },
  };
}

export function encodeGeminiError(error: GatewayError, requestId: string): EncodedError {
  return { body: geminiErrorBody(error, requestId), headers: {} };
}
