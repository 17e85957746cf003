/**
 * The one error family of the gateway (docs/errors.md). Every failure a caller can see is a
 * GatewayError with a code from this closed union; status and type follow from the code,
 * checked exhaustively by the compiler, so no route can invent its own shape.
 */
export type ErrorCode =
  | 'model_not_found'
  | 'model_mode_mismatch'
  | 'unsupported_input_modality'
  | 'invalid_image_url'
  | 'invalid_agent_graph'
  | 'invalid_body'
  | 'unsupported_field'
  | 'model_unpriced'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'key_expired'
  | 'invalid_credentials'
  | 'session_expired'
  | 'key_paused'
  | 'key_revoked'
  | 'insufficient_scope'
  | 'model_not_allowed'
  | 'agent_access_denied'
  | 'upstream_object_not_granted'
  | 'csrf_token_invalid'
  | 'insufficient_role'
  | 'agent_not_found'
  | 'agent_conversation_error'
  | 'not_found'
  | 'conflict'
  | 'request_too_large'
  | 'unsupported_media_type'
  | 'upgrade_required'
  | 'rate_limit_exceeded'
  | 'daily_token_cap_exceeded'
  | 'monthly_cost_cap_exceeded'
  | 'budget_exceeded'
  | 'provider_rate_limited'
  | 'provider_error'
  | 'provider_timeout'
  | 'provider_not_configured'
  | 'shutting_down'
  | 'storage_unavailable'
  | 'internal_error'
  | 'tool_not_found'
  | 'mcp_session_not_found'
  | 'mcp_server_unavailable'
  | 'mcp_server_error'
  | 'guardrail_blocked';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'api_error';

interface ErrorClass {
  readonly status: number;
  readonly type: ErrorType;
  /**
   * Whether sending the same request again may succeed, unless the place that raises the
   * error knows better (a provider_error for a refused credential does not cure itself).
   * Sent as `x-should-retry`, which the official OpenAI and Anthropic SDKs obey over their
   * own status rules: without it they retry every 409, 429 and 5xx, a daily cap that resets
   * in hours too.
   */
  readonly retryable: boolean;
}

const ERROR_CLASSES: { readonly [C in ErrorCode]: ErrorClass } = {
  model_not_found: { status: 400, type: 'invalid_request_error', retryable: false },
  model_mode_mismatch: { status: 400, type: 'invalid_request_error', retryable: false },
  unsupported_input_modality: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_image_url: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_agent_graph: { status: 400, type: 'invalid_request_error', retryable: false },
  invalid_body: { status: 400, type: 'invalid_request_error', retryable: false },
  unsupported_field: { status: 400, type: 'invalid_request_error', retryable: false },
  model_unpriced: { status: 400, type: 'invalid_request_error', retryable: false },
  missing_api_key: { status: 401, type: 'authentication_error', retryable: false },
  invalid_api_key: { status: 401, type: 'authentication_error', retryable: false },
  key_expired: { status: 401, type: 'authentication_error', retryable: false },
  invalid_credentials: { status: 401, type: 'authentication_error', retryable: false },
  session_expired: { status: 401, type: 'authentication_error', retryable: false },
  key_paused: { status: 403, type: 'permission_error', retryable: false },
  key_revoked: { status: 403, type: 'permission_error', retryable: false },
  insufficient_scope: { status: 403, type: 'permission_error', retryable: false },
  model_not_allowed: { status: 403, type: 'permission_error', retryable: false },
  agent_access_denied: { status: 403, type: 'permission_error', retryable: false },
  upstream_object_not_granted: { status: 403, type: 'permission_error', retryable: false },
  csrf_token_invalid: { status: 403, type: 'permission_error', retryable: false },
  insufficient_role: { status: 403, type: 'permission_error', retryable: false },
  agent_not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  agent_conversation_error: { status: 404, type: 'invalid_request_error', retryable: false },
  not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  conflict: { status: 409, type: 'invalid_request_error', retryable: true },
  request_too_large: { status: 413, type: 'invalid_request_error', retryable: false },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', retryable: false },
  upgrade_required: { status: 426, type: 'invalid_request_error', retryable: false },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error', retryable: true },
  daily_token_cap_exceeded: { status: 429, type: 'rate_limit_error', retryable: false },
  monthly_cost_cap_exceeded: { status: 429, type: 'rate_limit_error', retryable: false },
  // A team, project, key or end-user budget (decisions §15): it resets with its period, not in seconds.
  budget_exceeded: { status: 429, type: 'rate_limit_error', retryable: false },
  provider_rate_limited: { status: 429, type: 'rate_limit_error', retryable: true },
  provider_error: { status: 502, type: 'api_error', retryable: true },
  provider_timeout: { status: 504, type: 'api_error', retryable: true },
  // Sending it again meets the same answer until the operator gives the provider a credential.
  provider_not_configured: { status: 503, type: 'api_error', retryable: false },
  shutting_down: { status: 503, type: 'api_error', retryable: true },
  storage_unavailable: { status: 503, type: 'api_error', retryable: true },
  internal_error: { status: 500, type: 'api_error', retryable: true },
  // MCP (docs/mcp.md): an unknown tool and one the key may not use get the same answer.
  tool_not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  mcp_session_not_found: { status: 404, type: 'invalid_request_error', retryable: false },
  mcp_server_unavailable: { status: 502, type: 'api_error', retryable: true },
  mcp_server_error: { status: 502, type: 'api_error', retryable: false },
  // A guardrail refused the caller's input (docs/guardrails.md); on the model's answer it is OUTPUT_CLASSES'.
  guardrail_blocked: { status: 400, type: 'invalid_request_error', retryable: false },
};

/**
 * Codes that mean another status when raised on the model's answer rather than the caller's
 * input (decisions §13): the caller did nothing wrong, the gateway refuses what came back.
 */
const OUTPUT_CLASSES: { readonly [C in ErrorCode]?: ErrorClass } = {
  guardrail_blocked: { status: 502, type: 'api_error', retryable: false },
};

/**
 * A failure the operator must hear of, because no caller can cure it: the provider refused the
 * gateway's own credential or account, or could not be reached at all.
 */
export type ProviderFault = 'credential_refused' | 'unreachable';

/**
 * What a provider said about a call of it that failed, carried on the error (as the vendors'
 * SDKs keep status and request id on theirs): for the request log, the admin API, provider
 * health and routing; never sent to the caller.
 */
export interface UpstreamFacts {
  /** The provider's name in the gateway. */
  readonly provider: string;
  /** The provider's HTTP status, when it answered with one. */
  readonly status?: number;
  /** Set when the operator must hear of the failure (provider health). */
  readonly fault?: ProviderFault;
  /** The provider's own error message and type, as its error body gave them. */
  readonly message?: string | null;
  readonly errorType?: string;
  /** The provider's machine-readable error code (OpenAI's `code`). */
  readonly errorCode?: string;
  /** The vendor's own id of the call (what its support asks for). */
  readonly requestId?: string;
}

export interface GatewayErrorOptions {
  /** The request field at fault, as OpenAI's `param`. */
  param?: string | null;
  /** Seconds for a `Retry-After` header (429s, 503s). */
  retryAfterSeconds?: number;
  /** Overrides the code's default retryability (see ErrorClass.retryable). */
  retryable?: boolean;
  /** Extra response headers the error carries (rate-limit headers). */
  headers?: Record<string, string>;
  /** Detail kept for the log and the admin API only, never sent to the caller. */
  logDetail?: Record<string, unknown>;
  /** What the provider said, when a provider call failed. */
  upstream?: UpstreamFacts;
  /** Raised on the model's answer, not the caller's input: the code's output status where it has one (OUTPUT_CLASSES). */
  output?: boolean;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly retryAfterSeconds: number | undefined;
  /** Whether the caller may send the same request again with a chance of success (`x-should-retry`). */
  readonly retryable: boolean;
  readonly headers: Record<string, string> | undefined;
  readonly logDetail: Record<string, unknown> | undefined;
  readonly upstream: UpstreamFacts | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    const errorClass = (options.output === true ? OUTPUT_CLASSES[code] : undefined) ?? ERROR_CLASSES[code];
    this.code = code;
    this.status = errorClass.status;
    this.type = errorClass.type;
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.retryable = options.retryable ?? errorClass.retryable;
    this.headers = options.headers;
    this.logDetail = options.logDetail;
    this.upstream = options.upstream;
  }

  /**
   * What the request log and the admin API keep of the failure: its detail, and the
   * provider's facts under the names the log has always used; null when there is none.
   */
  detail(): Record<string, unknown> | null {
    const upstream = this.upstream;
    const facts =
      upstream === undefined
        ? {}
        : {
            provider: upstream.provider,
            ...(upstream.status === undefined ? {} : { upstreamStatus: upstream.status }),
            ...(upstream.message === undefined ? {} : { upstreamMessage: upstream.message }),
            ...(upstream.errorType === undefined ? {} : { upstreamType: upstream.errorType }),
            ...(upstream.errorCode === undefined ? {} : { upstreamCode: upstream.errorCode }),
            ...(upstream.fault === undefined ? {} : { fault: upstream.fault }),
          };
    if (this.logDetail === undefined && upstream === undefined) return null;
    return { ...this.logDetail, ...facts };
  }

  /** The OpenAI-shaped error body of docs/errors.md. */
  toBody(requestId: string): ErrorBody {
    return {
      error: { message: this.message, type: this.type, code: this.code, param: this.param, request_id: requestId },
    };
  }
}

export interface ErrorBody {
  error: { message: string; type: ErrorType; code: ErrorCode; param: string | null; request_id: string };
}

export function statusOf(code: ErrorCode, options: { output?: boolean } = {}): number {
  return ((options.output === true ? OUTPUT_CLASSES[code] : undefined) ?? ERROR_CLASSES[code]).status;
}

/** Every code of the closed union, in the order of the table (docs are checked against it). */
export const ERROR_CODES = Object.keys(ERROR_CLASSES) as readonly ErrorCode[];

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

/** Shorthand for the most common client mistake: a bad field in the body. */
export function invalidBody(message: string, param: string | null = null): GatewayError {
  return new GatewayError('invalid_body', message, { param });
}

/**
 * A field the model cannot honour and dropping it would change what the caller gets (decisions
 * §9 rule 3): the message names the field, what to do, and the models that take it where some do.
 */
export function unsupportedField(message: string, param: string): GatewayError {
  return new GatewayError('unsupported_field', message, { param });
}
