import { GatewayError } from '../../errors/index.js';
import { mapUpstreamFailure, retryAfterOf } from '../shared/upstream-errors.js';
import type { UpstreamResponse } from '../shared/upstream-http.js';
import { parseErrorBody, type AnthropicErrorBody } from './wire.js';

/** An HTTP error status from Anthropic, with its `{"type":"error","error":{…}}` body, in the gateway's terms. */
export function upstreamError(provider: string, response: Pick<UpstreamResponse, 'status' | 'headers'>, bodyText: string): GatewayError {
  return mapUpstreamFailure({
    provider,
    status: response.status,
    upstreamMessage: errorBodyOf(bodyText)?.error.message ?? (bodyText.trim().length > 0 ? bodyText.trim() : null),
    retryAfterSeconds: retryAfterOf(response.headers['retry-after']),
  });
}

function errorBodyOf(text: string): AnthropicErrorBody | null {
  try {
    return parseErrorBody(JSON.parse(text));
  } catch {
    return null;
  }
}

/**
 * An `event: error` frame inside a 200 stream (typically overloaded_error). The caller gets
 * neutral text; Anthropic's type and message stay in the log.
 */
export function streamErrorEvent(provider: string, body: AnthropicErrorBody): GatewayError {
  const message =
    body.error.type === 'overloaded_error'
      ? 'The model provider is overloaded and stopped the answer. Try again later.'
      : 'The model provider stopped the answer with an error. Try again later.';
  return new GatewayError('provider_error', message, {
    upstream: { provider, errorType: body.error.type, message: body.error.message },
  });
}

export function malformedResponse(provider: string, detail: string): GatewayError {
  return new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', {
    logDetail: { provider, reason: detail },
  });
}

export function streamEndedEarly(provider: string): GatewayError {
  return new GatewayError('provider_error', 'The model provider ended the stream before the answer was complete. Try again later.', {
    logDetail: { provider, reason: 'stream ended without message_stop' },
  });
}
