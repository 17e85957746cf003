import { GatewayError, type ProviderFault } from '../../errors/index.js';
import { redactText } from '../../redaction/index.js';

/** The fault a provider call's error stands for, if any. */
export function providerFaultOf(error: unknown): ProviderFault | undefined {
  return error instanceof GatewayError ? error.upstream?.fault : undefined;
}

/** Whether the provider answered over HTTP (with an error status): it is reachable. */
export function providerAnswered(error: unknown): boolean {
  return error instanceof GatewayError && error.upstream?.status !== undefined;
}

export interface UpstreamFailure {
  provider: string;
  status: number;
  /** The provider's own error message, already extracted from its error body format. */
  upstreamMessage: string | null;
  /** The provider's error type and code, when its error body names them. */
  upstreamType?: string;
  upstreamCode?: string;
  /** Seconds from the provider's Retry-After, when sent. */
  retryAfterSeconds?: number;
  /**
   * The provider refused the gateway's account whatever the status says (OpenAI's 429
   * `insufficient_quota`: out of credit or over a spend limit, which waiting does not cure).
   */
  accountRefused?: boolean;
  /**
   * The request field the provider named (OpenAI's `param`), only from an adapter that sends
   * its call's body field for field: on the model endpoints that body is the caller's, so the
   * name is the caller's own (for a body the gateway built, the message names it too).
   */
  callerParam?: string | null;
}

/** A provider's message as the caller may read it: the log's redaction (key shapes, the gateway's own credentials by value), bounded. */
function clean(message: string): string {
  return redactText(message).slice(0, 500);
}

/**
 * Maps an upstream HTTP error status to the gateway's error family. A rejection of the gateway's own
 * credential (401/403) or of its account (402 Payment Required, or `accountRefused`: out of
 * credit, billing not set up) is provider-neutral for the caller, who cannot fix it: the
 * status and message are kept only in the error's upstream facts, which only the admin API shows. A 404 is a
 * provider_error too: the provider does not know the model or path the gateway called.
 */
export function mapUpstreamFailure(failure: UpstreamFailure): GatewayError {
  const upstream = {
    provider: failure.provider,
    status: failure.status,
    message: failure.upstreamMessage,
    ...(failure.upstreamType === undefined ? {} : { errorType: failure.upstreamType }),
    ...(failure.upstreamCode === undefined ? {} : { errorCode: failure.upstreamCode }),
  };
  const { status } = failure;
  if (status === 401 || status === 402 || status === 403 || failure.accountRefused === true) {
    // The fault is what reaches the operator (process log, metric, `modelgate status`): see providers/health.ts.
    // Sending it again meets the same refusal until the operator fixes the credential or account.
    return new GatewayError('provider_error', 'The model provider refused the request. The gateway operator has been notified; try again later.', {
      upstream: { ...upstream, fault: 'credential_refused' },
      retryable: false,
    });
  }
  if (status === 404) {
    // The provider does not know the model or the path the gateway called: a base URL or an
    // upstream id of the gateway's configuration, or a model id the provider does not serve.
    // Not a fault in the caller's body, and no retry cures it.
    return new GatewayError(
      'provider_error',
      'The model provider does not serve this model at the address the gateway calls. Use a model listed by GET /v1/models; if it is listed, the gateway operator must check the provider settings.',
      { upstream, retryable: false },
    );
  }
  if (status === 408 || status === 504) {
    return new GatewayError('provider_timeout', 'The model provider did not answer in time. Try again later.', { upstream });
  }
  if (status === 429) {
    // Not the key's own per-minute limit (rate_limit_exceeded): the caller can tell them apart.
    return new GatewayError('provider_rate_limited', 'The model provider is rate limiting requests for this model. Retry after the Retry-After seconds.', {
      upstream,
      retryAfterSeconds: failure.retryAfterSeconds ?? 1,
    });
  }
  if (status === 413) {
    return new GatewayError('request_too_large', 'The model provider rejected the request as too large. Send less content.', { upstream });
  }
  if (status >= 400 && status < 500) {
    const detail = failure.upstreamMessage !== null ? `: ${clean(failure.upstreamMessage)}` : '.';
    const param = typeof failure.callerParam === 'string' ? clean(failure.callerParam) : null;
    return new GatewayError('invalid_body', `The model provider rejected the request${detail}`, { upstream, param });
  }
  return new GatewayError('provider_error', 'The model provider failed to answer. Try again later.', { upstream });
}

export function retryAfterOf(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}

/** Seconds of a duration as OpenAI-compatible servers write their rate-limit resets: `20ms`, `1s`, `6m0s`, `1h2m3.5s`. */
function durationSeconds(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== text.trim()) return undefined;
  const scale = { ms: 0.001, s: 1, m: 60, h: 3600 } as const;
  return parts.reduce((sum, part) => sum + Number(part[1]) * scale[part[2] as keyof typeof scale], 0);
}

/**
 * When a rate-limited call may be sent again: `Retry-After`, else the later of the
 * `x-ratelimit-reset-requests` / `-tokens` durations; undefined when the provider said neither.
 */
export function rateLimitRetryAfterOf(headers: Record<string, string | string[] | undefined>): number | undefined {
  const retryAfter = retryAfterOf(headers['retry-after']);
  if (retryAfter !== undefined) return retryAfter;
  const resets = ['x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens']
    .map((name) => headers[name])
    .map((value) => (typeof value === 'string' ? durationSeconds(value) : undefined))
    .filter((seconds): seconds is number => seconds !== undefined);
  return resets.length === 0 ? undefined : Math.ceil(Math.max(...resets));
}
