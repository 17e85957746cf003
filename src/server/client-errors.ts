import { maxHeaderSize, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError, invalidBody } from '../errors/index.js';
import { errorHeadersOf } from './error-mapping.js';

/** What to fix, for the HTTP parser's error codes a caller can cause (llhttp's names). */
const PARSER_FAULTS: Readonly<Record<string, string>> = {
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds a character HTTP does not allow',
  HPE_INVALID_CONTENT_LENGTH: 'the Content-Length header is not a whole number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'it has more than one Content-Length header; send exactly one',
  HPE_INVALID_TRANSFER_ENCODING: 'its Transfer-Encoding cannot be read (send chunked alone, or a Content-Length and no Transfer-Encoding)',
  HPE_INVALID_CHUNK_SIZE: 'a chunk of its chunked body has no valid size',
  HPE_INVALID_METHOD: 'its method is not an HTTP method',
  HPE_INVALID_URL: 'its path is not a valid URL path',
  HPE_INVALID_VERSION: 'its HTTP version is not 1.0 or 1.1',
};

/**
 * Faults llhttp files under a code that names another (both Content-Length and
 * Transfer-Encoding come as HPE_INVALID_CONTENT_LENGTH or HPE_INVALID_TRANSFER_ENCODING,
 * depending on their order), told apart by the reason it gives.
 */
const REASON_FAULTS: readonly [reason: RegExp, fault: string][] = [
  [/can't be present with/, 'it has both Content-Length and Transfer-Encoding; send one of them'],
  [/^Duplicate Content-Length/, 'it has more than one Content-Length header; send exactly one'],
];

export interface ClientTimeouts {
  /** Longest wait for a request's headers (ms). */
  headersMs: number;
  /** Longest wait for a whole request (ms); 0 = none. */
  requestMs: number;
  /** How often Node looks for requests past them (ms). */
  checkIntervalMs: number;
}

/** Node's own wait for a request's headers, shortened to the whole request's when that is shorter. */
const HEADERS_TIMEOUT_MS = 60_000;

/** The timeouts for `server.requestTimeoutMs`; checked every quarter of the shorter one, so each is noticed in time. */
export function clientTimeoutsOf(requestMs: number): ClientTimeouts {
  const headersMs = requestMs > 0 ? Math.min(HEADERS_TIMEOUT_MS, requestMs) : HEADERS_TIMEOUT_MS;
  return { requestMs, headersMs, checkIntervalMs: Math.max(1_000, Math.min(30_000, headersMs / 4)) };
}

function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
}

/** The error for a request Node's HTTP parser refused or gave up on. */
function clientError(error: NodeJS.ErrnoException, timeouts: ClientTimeouts): GatewayError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new GatewayError(
      'request_too_large',
      `The request's headers are over ${maxHeaderSize} bytes, the most the gateway reads. Send fewer or shorter headers (large cookies are the usual cause).`,
    );
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const whole = timeouts.requestMs > 0 ? ` and all of it within ${timeouts.requestMs / 1000} s` : '';
    return invalidBody(`The request did not arrive in time: its headers must arrive within ${timeouts.headersMs / 1000} s${whole}. Send it without pausing.`);
  }
  const reason = (error as { reason?: unknown }).reason;
  const byReason = typeof reason === 'string' ? REASON_FAULTS.find(([pattern]) => pattern.test(reason))?.[1] : undefined;
  const fault = byReason ?? PARSER_FAULTS[error.code ?? ''] ?? 'the gateway could not parse it';
  return invalidBody(`The request is not valid HTTP/1.1: ${fault}.`);
}

/**
 * Answers what Node's HTTP parser refuses before any route sees it (oversized headers, bad
 * characters, a malformed request line or length, a request too slow to arrive) with the
 * gateway's error body and an x-request-id like every other error, instead of the framework's own shape. The
 * connection's framing is lost, so it is closed. As Node does, nothing is written on a
 * connection that has already sent something (a response may be under way on it).
 */
export function clientErrorHandler(nextRequestId: () => string, timeouts: ClientTimeouts): (error: NodeJS.ErrnoException, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (!socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const requestId = nextRequestId();
    const gatewayError = clientError(error, timeouts);
    const body = JSON.stringify(gatewayError.toBody(requestId));
    socket.end(
      `HTTP/1.1 ${gatewayError.status} ${STATUS_CODES[gatewayError.status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n${headerLines(errorHeadersOf(gatewayError))}connection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  };
}

/** The router's longest path parameter (Fastify's `maxParamLength`): ids and slugs are at most 64. */
export const MAX_PARAM_LENGTH = 100;

/**
 * The answer for what Fastify's router refuses before any hook runs: a path whose
 * percent-escapes do not decode, or a path parameter over its length limit (Fastify would
 * answer both in its own shape, without x-request-id).
 */
export function frameworkError(error: { code?: string }, requestId: string, response: ServerResponse): void {
  const gatewayError = invalidBody(
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? `A part of the path is over ${MAX_PARAM_LENGTH} characters; no id or name is that long.`
      : 'The path holds a percent-escape that does not decode (% must be followed by two hex digits that form UTF-8). Encode the path again.',
  );
  const body = JSON.stringify(gatewayError.toBody(requestId));
  response.writeHead(gatewayError.status, {
    ...errorHeadersOf(gatewayError),
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  response.end(body);
}
