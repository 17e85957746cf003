import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { GatewayError } from '../../errors/index.js';

/** Shared settings of every adapter's HTTP calls, injected (tests and the benchmark swap them). */
export interface UpstreamHttpOptions {
  /** Pooled, keep-alive dispatcher shared by all adapters. */
  dispatcher: Dispatcher;
  /** Longest wait for response headers; then 504 provider_timeout. */
  timeoutMs: number;
  /** Longest gap between two body chunks (stream frames); then the stream fails. */
  streamIdleTimeoutMs: number;
}

export function createUpstreamDispatcher(options: { connectionsPerOrigin: number; timeoutMs: number; streamIdleTimeoutMs: number }): Dispatcher {
  return new Agent({
    connections: options.connectionsPerOrigin,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.streamIdleTimeoutMs,
  });
}

export interface UpstreamRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer | Uint8Array | FormData;
  signal: AbortSignal;
  /** Provider name, for log detail only. */
  provider: string;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** Milliseconds until the response headers arrived. */
  latencyMs: number;
}

/**
 * One HTTP call to a provider. Transport failures become GatewayErrors here; HTTP error
 * statuses are returned for the adapter to map with its own error body format.
 */
export async function sendUpstream(http: UpstreamHttpOptions, request: UpstreamRequest): Promise<UpstreamResponse> {
  const started = performance.now();
  try {
    const response = await http.dispatcher.request({
      origin: new URL(request.url).origin,
      path: new URL(request.url).pathname + new URL(request.url).search,
      method: request.method ?? 'POST',
      headers: request.headers,
      body: request.body as Dispatcher.DispatchOptions['body'],
      signal: request.signal,
      headersTimeout: http.timeoutMs,
      bodyTimeout: http.streamIdleTimeoutMs,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body, latencyMs: performance.now() - started };
  } catch (error) {
    throw transportError(error, request.provider, request.signal);
  }
}

/** Maps a failure to reach or hear from the provider to the §4 family. */
export function transportError(error: unknown, provider: string, signal?: AbortSignal): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new GatewayError('provider_timeout', 'The model provider did not answer in time. Try again later.', {
      logDetail: { provider, reason: (error as Error).name },
    });
  }
  if (signal?.aborted === true) {
    const reason: unknown = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return new GatewayError('provider_error', 'The request to the model provider was cancelled.', {
      logDetail: { provider, reason: 'aborted' },
    });
  }
  const code = (error as { code?: string }).code;
  return new GatewayError('provider_error', 'The model provider could not be reached. Try again later.', {
    logDetail: { provider, reason: code ?? (error as Error).name ?? 'unknown' },
  });
}

/** Reads a whole (error or JSON) body as text, bounded so a hostile upstream cannot exhaust memory. */
export async function readBodyText(body: Dispatcher.ResponseData['body'], limitBytes = 64 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) {
      body.destroy();
      throw new GatewayError('provider_error', 'The model provider sent a response that is too large.', { logDetail: { size } });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readBodyBytes(body: Dispatcher.ResponseData['body']): Promise<Buffer> {
  return Buffer.from(await body.arrayBuffer());
}
