import { TypeCompiler } from '@sinclair/typebox/compiler';
import { GatewayError } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';
import { ERROR_BODY_LIMIT_BYTES, readBodyText, type UpstreamResponse } from '../shared/upstream-http.js';
import { mapUpstreamFailure, retryAfterOf } from '../shared/upstream-errors.js';
import { ErrorBodySchema, type GeminiErrorBody } from './wire.js';

const isErrorBody = TypeCompiler.Compile(ErrorBodySchema);

/** Google's error body, `{"error": {code, message, status, details}}`; streams may wrap it in an array. */
export function parseErrorBody(value: unknown): GeminiErrorBody['error'] | null {
  const body = Array.isArray(value) ? (value[0] as unknown) : value;
  return isErrorBody.Check(body) ? body.error : null;
}

function detailOf(error: GeminiErrorBody['error'] | null, type: string): Record<string, unknown> | undefined {
  return error?.details?.find((detail) => detail['@type'] === `type.googleapis.com/google.rpc.${type}`);
}

/** `RetryInfo.retryDelay` is a protobuf Duration in JSON: "31s", "0.5s". */
function retryDelaySeconds(error: GeminiErrorBody['error'] | null): number | undefined {
  const delay = detailOf(error, 'RetryInfo')?.retryDelay;
  if (typeof delay !== 'string' || !/^\d+(\.\d+)?s$/.test(delay)) return undefined;
  return Math.ceil(Number(delay.slice(0, -1)));
}

/**
 * Why a Gemini 400 is about the gateway's own credential or account rather than the
 * caller's request: a bad API key (ErrorInfo reason API_KEY_INVALID), or FAILED_PRECONDITION,
 * which Google uses for an account without billing in a region without the free tier.
 * Null for a 400 the caller can fix.
 */
function accountProblemOf(error: GeminiErrorBody['error'] | null): string | null {
  if (detailOf(error, 'ErrorInfo')?.reason === 'API_KEY_INVALID') return 'API_KEY_INVALID';
  if (error?.status === 'FAILED_PRECONDITION') return 'FAILED_PRECONDITION';
  return null;
}

/**
 * Maps a Gemini error (HTTP status plus error body) to the gateway's error family. Gemini answers a bad
 * API key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID), not 401, and an account that
 * needs billing with 400 FAILED_PRECONDITION: both are the gateway's own, so they get the
 * provider-neutral answer of a 401 instead of telling the caller to fix the request.
 */
export function geminiFailure(options: { provider: string; status: number; body: unknown; retryAfterHeader?: string | string[] }): GatewayError {
  const error = parseErrorBody(options.body);
  const upstreamMessage = error?.message ?? null;
  const accountProblem = accountProblemOf(error);
  const mapped = mapUpstreamFailure({
    provider: options.provider,
    status: accountProblem !== null ? 401 : options.status,
    upstreamMessage,
    retryAfterSeconds: retryAfterOf(options.retryAfterHeader) ?? retryDelaySeconds(error),
  });
  if (accountProblem === null) return mapped;
  // Keep the real status in the log, as for any other upstream failure.
  return new GatewayError(mapped.code, mapped.message, {
    retryable: mapped.retryable,
    upstream: { ...mapped.upstream!, status: options.status, errorType: accountProblem },
  });
}

/** Reads the error body of a non-2xx response and maps it. */
export async function failureOfResponse(response: UpstreamResponse, provider: string): Promise<GatewayError> {
  const text = await readBodyText(response.body, ERROR_BODY_LIMIT_BYTES).catch(() => '');
  return failureOfErrorBody(provider, response.status, response.headers, text);
}

/** Maps a non-2xx status and its error body (text). */
export function failureOfErrorBody(provider: string, status: number, headers: UpstreamResponse['headers'], text: string): GatewayError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return geminiFailure({ provider, status, body, retryAfterHeader: headers['retry-after'] });
}

const PENALTY_FIELDS = ['presence_penalty', 'frequency_penalty'] as const;

/**
 * Gemini 2.5 and later refuse any penalty but 0 with "Penalty is not enabled for
 * models/gemini-2.5-flash", which names neither of the caller's fields nor the fix: that 400
 * is told again in the caller's terms. Any other failure is returned as it is.
 */
export function inCallerTerms(error: GatewayError, body: JsonObject): GatewayError {
  if (error.code !== 'invalid_body') return error;
  const upstreamMessage = error.upstream?.message;
  if (typeof upstreamMessage !== 'string' || !/penalty is not enabled/i.test(upstreamMessage)) return error;
  const sent = PENALTY_FIELDS.filter((field) => typeof body[field] === 'number' && body[field] !== 0);
  if (sent.length === 0) return error;
  const fields = sent.join(' and ');
  const pronoun = sent.length > 1 ? 'them' : 'it';
  return new GatewayError('invalid_body', `This model does not support ${fields}: remove ${pronoun} from the request (or send 0).`, {
    param: sent[0],
    ...(error.upstream !== undefined ? { upstream: error.upstream } : {}),
  });
}
