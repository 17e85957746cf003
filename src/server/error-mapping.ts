import type { FastifyError } from 'fastify';
import { GatewayError } from '../errors/index.js';
import { isStorageUnavailable } from '../storage/index.js';

/** When a caller refused for a database outage should try again: a restart or failover takes seconds. */
const STORAGE_RETRY_AFTER_SECONDS = 5;

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldName(context: string | undefined, instancePath: string, extra?: string): string {
  const path = instancePath
    .split('/')
    .filter((part) => part.length > 0)
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('');
  const base = `${context ?? 'body'}${path}`;
  return extra === undefined ? base : `${base}.${extra}`;
}

/** Turns a schema failure into a message that names the field and says what to send. */
function describeValidation(issue: ValidationIssue, context: string | undefined): GatewayError {
  const { keyword, params } = issue;
  if (keyword === 'required') {
    const field = fieldName(context, issue.instancePath, String(params.missingProperty));
    return new GatewayError('invalid_body', `${field} is required.`, { param: field.replace(/^body\./, '') });
  }
  if (keyword === 'additionalProperties') {
    const field = fieldName(context, issue.instancePath, String(params.additionalProperty));
    return new GatewayError('invalid_body', `${field} is not a recognised field; remove it.`, {
      param: field.replace(/^body\./, ''),
    });
  }
  if (keyword === 'type' && issue.instancePath === '' && (context ?? 'body') === 'body') {
    return new GatewayError('invalid_body', 'The request body must be a JSON object.');
  }
  const field = fieldName(context, issue.instancePath);
  const detail =
    keyword === 'enum' && Array.isArray(params.allowedValues)
      ? `must be one of ${params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`
      : (issue.message ?? 'is invalid');
  return new GatewayError('invalid_body', `${field} ${detail}.`, { param: field.replace(/^body\.?/, '') || null });
}

/**
 * Maps framework errors (parsing, validation, limits) to the gateway's error family. Anything unknown
 * becomes internal_error; its details go to the process log only.
 */
export function toGatewayError(error: unknown, bodyLimitBytes: number): GatewayError {
  if (error instanceof GatewayError) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation) && fastifyError.validation.length > 0) {
    return describeValidation(fastifyError.validation[0]!, fastifyError.validationContext);
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new GatewayError(
        'request_too_large',
        `The request body is larger than the limit of ${formatBytes(bodyLimitBytes)}. Send a smaller body.`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new GatewayError(
        'unsupported_media_type',
        'This endpoint accepts Content-Type: application/json (transcriptions: multipart/form-data).',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_body', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_body', 'Content-Length does not match the body that was sent.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError('invalid_body', 'The request body is not valid JSON.');
    // Node's "aborted": the client closed the connection while sending its body. Its doing,
    // not a fault of the gateway (the request is logged 499 client_closed; no one reads this).
    case 'ECONNRESET':
      if (fastifyError.message === 'aborted') return new GatewayError('invalid_body', 'The client closed the connection before the whole request body arrived.');
      break;
    // PostgreSQL's SQLSTATE 22021 and 22P05: its text cannot hold U+0000, so a value the caller
    // sent (a name, an id) could be neither stored nor looked up. The caller's to fix, not a 500.
    case '22021':
    case '22P05':
      return new GatewayError('invalid_body', 'A value in the request holds the character U+0000, which the gateway cannot store or look up. Remove it and send the request again.');
    // SQLSTATE 22003 and 22P02: a number beyond its column's range (1e20, or 1e308 written
    // as text the column cannot read), which no schema bound caught.
    case '22003':
    case '22P02':
      return new GatewayError('invalid_body', 'A number in the request is larger (or closer to zero) than the gateway can store. Send a smaller one.');
    default:
      break;
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new GatewayError('invalid_body', 'The request body is not valid JSON.');
  }
  if (fastifyError.statusCode === 400 && typeof fastifyError.message === 'string' && fastifyError.message.includes('__proto__')) {
    return new GatewayError('invalid_body', 'The request body contains a forbidden "__proto__" or "constructor" key.');
  }
  if (isStorageUnavailable(error)) {
    return new GatewayError('storage_unavailable', "The gateway's database is not reachable right now. Send the request again in a few seconds.", {
      retryAfterSeconds: STORAGE_RETRY_AFTER_SECONDS,
      cause: error,
    });
  }
  return new GatewayError('internal_error', 'The gateway failed to process the request. Quote the request id when reporting it.', {
    cause: error,
  });
}

/**
 * The headers every error response carries besides its body: `x-should-retry` (whether the
 * same request may succeed later; the official SDKs obey it over their own status rules),
 * `retry-after` when the error knows the wait, and the error's own (rate-limit headers).
 */
export function errorHeadersOf(error: GatewayError): Record<string, string> {
  const headers: Record<string, string> = { 'x-should-retry': String(error.retryable) };
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
  return error.headers === undefined ? headers : { ...headers, ...error.headers };
}

export function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
