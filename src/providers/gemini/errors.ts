import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { GatewayError } from '../../errors/index.js';
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
 * Maps a Gemini error (HTTP status plus error body) to the §4 family. Gemini answers a bad
 * API key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID), not 401: it is still the
 * gateway's own credential, so it gets the provider-neutral answer like a 401.
 */
export function geminiFailure(options: { provider: string; status: number; body: unknown; retryAfterHeader?: string | string[] }): GatewayError {
  const error = parseErrorBody(options.body);
  const upstreamMessage = error?.message ?? null;
  const credentialRejected = detailOf(error, 'ErrorInfo')?.reason === 'API_KEY_INVALID';
  const mapped = mapUpstreamFailure({
    provider: options.provider,
    status: credentialRejected ? 401 : options.status,
    upstreamMessage,
    retryAfterSeconds: retryAfterOf(options.retryAfterHeader) ?? retryDelaySeconds(error),
  });
  if (credentialRejected && mapped.logDetail !== undefined) {
    // Keep the real status in the log, as for any other upstream failure.
    Object.assign(mapped.logDetail, { upstreamStatus: options.status, upstreamReason: 'API_KEY_INVALID' });
  }
  return mapped;
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
