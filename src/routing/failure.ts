import type { FailureClass } from '../config/index.js';
import { GatewayError } from '../errors/index.js';

/** Failures another try of the same model may not meet: retried on a deployment, then fallen back from. */
const RETRYABLE: ReadonlySet<FailureClass> = new Set(['rate_limit', 'server_error', 'timeout', 'connection']);

const CONTEXT_WINDOW = /context[_ ](length|window)|maximum context|prompt is too long|too many (input )?tokens/i;
const CONTENT_POLICY = /content[_ ](policy|filter|management)|safety (system|filter)/i;

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * The failure class of a provider call's error (docs/routing.md), or null for an error no
 * other try cures: the caller's own mistake, a refused service credential, a model the
 * provider does not serve, a call the client cancelled. Read from the error's code and the
 * provider's facts it carries, which every adapter fills the same way.
 */
export function failureClassOf(error: unknown): FailureClass | null {
  if (!(error instanceof GatewayError)) return null;
  const upstream = error.upstream;
  switch (error.code) {
    case 'provider_rate_limited':
      return 'rate_limit';
    case 'provider_timeout':
      return 'timeout';
    case 'provider_error': {
      if (upstream?.fault === 'unreachable') return 'connection';
      if (upstream?.fault === 'credential_refused' || error.logDetail?.reason === 'aborted') return null;
      const status = upstream?.status;
      // No status: the answer could not be read (cut off before its first frame, malformed, too large).
      if (status === undefined) return 'server_error';
      return status >= 500 ? 'server_error' : null;
    }
    case 'invalid_body':
    case 'request_too_large': {
      const said = `${textOf(upstream?.errorCode)} ${textOf(upstream?.errorType)} ${textOf(upstream?.message)}`;
      if (CONTEXT_WINDOW.test(said)) return 'context_window_exceeded';
      if (CONTENT_POLICY.test(said)) return 'content_policy';
      return null;
    }
    default:
      return null;
  }
}

/** Whether another try of the same model (on a deployment) may cure a failure of this class. */
export function isRetryable(failure: FailureClass): boolean {
  return RETRYABLE.has(failure);
}

/** The provider's Retry-After of a failure, in milliseconds (0 when it sent none). */
export function retryAfterMsOf(error: unknown): number {
  return error instanceof GatewayError && error.code === 'provider_rate_limited' ? (error.retryAfterSeconds ?? 0) * 1000 : 0;
}
