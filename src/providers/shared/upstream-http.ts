import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
import { GatewayError } from '../../errors/index.js';
import { cachedLookup } from '../../network/index.js';
import { withoutKnownSecrets } from '../../redaction/index.js';
import { whenAborted } from './abort-listeners.js';
import type { UpstreamNotes } from '../../model-api/index.js';
import { rateLimitShareOf } from './provider-rate-limits.js';
import type { UpstreamAttempt, UpstreamTracing } from '../../telemetry/index.js';

/** Shared settings of every adapter's HTTP calls, injected (tests and the benchmark swap them). */
export interface UpstreamHttpOptions {
  /** Pooled, keep-alive dispatcher shared by all adapters. */
  dispatcher: Dispatcher;
  /**
   * Longest wait, counted from the start of the call (a wait for a free pooled connection
   * included), for a whole answer, or for a stream's first event; then 504 provider_timeout.
   */
  timeoutMs: number;
  /** Longest gap between two stream events (comment lines do not count); then the stream fails. */
  streamIdleTimeoutMs: number;
  /** Set when traces are exported: each call is a span of its own, its `traceparent` sent along. */
  tracing?: UpstreamTracing;
}

export function createUpstreamDispatcher(options: { connectionsPerOrigin: number; timeoutMs: number; streamIdleTimeoutMs: number }): Dispatcher {
  return new Agent({
    // Provider host names from memory: a thread pool busy with other work never stalls a call.
    connect: { lookup: cachedLookup() },
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
  /** Pieces are sent one after another, with their total as the content length. */
  body?: string | Buffer | Uint8Array | readonly Uint8Array[] | FormData;
  signal: AbortSignal;
  /** Provider name, for log detail only. */
  provider: string;
  /** The call's own deadline for its answer to begin, when shorter than `timeoutMs` (CallContext.timeoutMs). */
  timeoutMs?: number | undefined;
  /** The gateway's request id the call is made for (its trace span names it). */
  requestId?: string;
  /** Where the call's provider request id and rate limit are noted, and the vendor's response header that names its own id for the call (when it has one). */
  notes?: UpstreamNotes | undefined;
  providerIdHeader?: string;
}

/** Notes the provider's id of a call, and its remaining rate limit, from its response headers (success or error alike). */
export function noteProviderRequestId(request: UpstreamRequest, headers: Record<string, string | string[] | undefined>): void {
  const { notes } = request;
  if (notes === undefined) return;
  const share = rateLimitShareOf(headers);
  if (share !== undefined) notes.rateLimitShare = share;
  if (request.providerIdHeader === undefined) return;
  const value = headers[request.providerIdHeader];
  const id = Array.isArray(value) ? value[0] : value;
  if (id !== undefined && id.length > 0) notes.providerRequestId = id.slice(0, 200);
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** Milliseconds until the response headers arrived. */
  latencyMs: number;
}

/**
 * Origin and path of each upstream URL, parsed once: adapters call a handful of URLs (a base
 * and an endpoint, per model for some), and parsing one on every call showed in profiles.
 */
const splitUrls = new Map<string, { origin: string; path: string }>();
/** URLs come from configuration and catalog ids; the bound only guards against a surprise. */
const MAX_SPLIT_URLS = 1024;

function splitUrl(url: string): { origin: string; path: string } {
  let split = splitUrls.get(url);
  if (split === undefined) {
    const parsed = new URL(url);
    split = { origin: parsed.origin, path: parsed.pathname + parsed.search };
    if (splitUrls.size >= MAX_SPLIT_URLS) splitUrls.clear();
    splitUrls.set(url, split);
  }
  return split;
}

/**
 * Whether a provider's status is an answer. Only a 2xx is: a 3xx (undici follows no
 * redirects) means the base URL points somewhere that moved, and its body is not the answer.
 */
export function isAnswerStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * The 504 of a call that ran out of time; `reason` (for the log) says whether it was still
 * waiting for a connection, every pooled one (upstream.connectionsPerOrigin) busy with other calls.
 */
export function answerTimeout(provider: string, reason: string): GatewayError {
  return new GatewayError('provider_timeout', 'The model provider did not answer in time. Try again later.', { logDetail: { provider, reason } });
}

/** The log reason of a deadline that passed before (true) or after the call got a connection. */
export function deadlineReason(waitingForConnection: boolean | undefined): string {
  if (waitingForConnection === undefined) return 'no answer within upstream.timeoutMs (a wait for a free connection included)';
  return waitingForConnection ? 'no free connection to the provider within upstream.timeoutMs' : 'no answer within upstream.timeoutMs';
}

/** Milliseconds a call has for its answer: upstream.timeoutMs, or the call's own shorter deadline. */
export function deadlineOf(http: UpstreamHttpOptions, request: UpstreamRequest): number {
  return request.timeoutMs === undefined ? http.timeoutMs : Math.min(request.timeoutMs, http.timeoutMs);
}

/**
 * One HTTP call to a provider, for an answer read whole. Transport failures become
 * GatewayErrors here; HTTP error statuses are returned for the adapter to map with its own
 * error body format. The call, body included, has `timeoutMs` from now: undici's own
 * timeouts start only once a connection is free, and are reset by every byte of the body.
 */
export async function sendUpstream(http: UpstreamHttpOptions, request: UpstreamRequest): Promise<UpstreamResponse> {
  const started = performance.now();
  const attempt = startAttempt(http, request);
  const controller = new AbortController();
  let expire: (error: GatewayError) => void = () => undefined;
  const expired = new Promise<never>((_resolve, reject) => (expire = reject));
  expired.catch(() => undefined);
  const deadline = setTimeout(() => {
    const error = answerTimeout(request.provider, deadlineReason(undefined));
    controller.abort(error);
    expire(error);
  }, deadlineOf(http, request));
  const stopListening = whenAborted(request.signal, () => controller.abort(request.signal.reason));
  const finish = () => {
    clearTimeout(deadline);
    stopListening();
  };
  if (request.signal.aborted) controller.abort(request.signal.reason);
  try {
    const response = await Promise.race([
      http.dispatcher.request({ ...dispatchOptionsOf(http, request, attempt), signal: controller.signal }),
      expired,
    ]);
    noteProviderRequestId(request, response.headers);
    response.body.once('close', finish);
    if (attempt !== undefined) {
      response.body.once('error', (error) => attempt.end(response.statusCode, error));
      response.body.once('close', () => attempt.end(response.statusCode));
    }
    return { status: response.statusCode, headers: response.headers, body: response.body, latencyMs: performance.now() - started };
  } catch (error) {
    finish();
    attempt?.end(null, error);
    throw transportError(error, request.provider, controller.signal);
  }
}

/** Largest whole response body read into memory, so a hostile upstream cannot exhaust it. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Longest error body kept for an adapter's error mapping (its message and codes are near the start). */
export const ERROR_BODY_LIMIT_BYTES = 1024 * 1024;

function tooLarge(size: number): GatewayError {
  return new GatewayError('provider_error', 'The model provider sent a response that is too large.', { logDetail: { size } });
}

export interface BufferedUpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Milliseconds until the response headers arrived. */
  latencyMs: number;
}

/** Collects a whole response for sendUpstreamBuffered. */
class CollectingHandler implements Dispatcher.DispatchHandler {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private latencyMs = 0;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly stopListening: () => void;
  /** The whole answer's deadline, from the start of the call. */
  private readonly deadline: NodeJS.Timeout;
  private expired: GatewayError | undefined;

  constructor(
    private readonly http: UpstreamHttpOptions,
    private readonly request: UpstreamRequest,
    private readonly limitBytes: number,
    private readonly started: number,
    private readonly resolve: (response: BufferedUpstreamResponse) => void,
    private readonly reject: (error: GatewayError) => void,
  ) {
    this.stopListening = whenAborted(request.signal, () => this.controller?.abort(request.signal.reason));
    this.deadline = setTimeout(() => this.expire(), deadlineOf(http, request));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.expired !== undefined) controller.abort(this.expired);
    else if (this.request.signal.aborted) controller.abort(this.request.signal.reason);
  }

  /** Out of time: the caller is answered now, even while the call still waits for a connection (it is aborted once it gets one). */
  private expire(): void {
    this.expired = answerTimeout(this.request.provider, deadlineReason(this.controller === undefined));
    this.stopListening();
    this.reject(this.expired);
    this.controller?.abort(this.expired);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = statusCode;
    this.headers = headers;
    this.latencyMs = performance.now() - this.started;
    noteProviderRequestId(this.request, headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.limitBytes) {
      controller.abort(tooLarge(this.size));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    clearTimeout(this.deadline);
    this.stopListening();
    const body = withoutKnownSecrets(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size));
    this.resolve({ status: this.status, headers: this.headers, body, latencyMs: this.latencyMs });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.deadline);
    this.stopListening();
    this.reject(transportError(error, this.request.provider, this.request.signal));
  }
}

/**
 * One HTTP call whose response is wanted whole (JSON). A plain dispatch handler collects
 * the body: `request()` wraps every response in a stream, promises and async-context
 * bookkeeping, which cost a small call as much as the rest of its client side (measured).
 * Same outcomes as sendUpstream and readBodyText together: transport failures and a body
 * over `limitBytes` reject with a GatewayError; HTTP error statuses resolve.
 */
export function sendUpstreamBuffered(http: UpstreamHttpOptions, request: UpstreamRequest, limitBytes = MAX_BODY_BYTES): Promise<BufferedUpstreamResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    dispatchUpstream(http, request, new CollectingHandler(http, request, limitBytes, started, resolve, reject));
  });
}

/** Dispatches a call to `handler`; a traced call goes through a span of its own, ended with the response. */
export function dispatchUpstream(http: UpstreamHttpOptions, request: UpstreamRequest, handler: Dispatcher.DispatchHandler): void {
  const attempt = startAttempt(http, request);
  http.dispatcher.dispatch(dispatchOptionsOf(http, request, attempt), attempt === undefined ? handler : new TracedHandler(handler, attempt));
}

/** The span of one call when traces are exported; nothing at all otherwise. */
function startAttempt(http: UpstreamHttpOptions, request: UpstreamRequest): UpstreamAttempt | undefined {
  if (http.tracing === undefined) return undefined;
  const method = request.method ?? 'POST';
  return http.tracing.startAttempt({ requestId: request.requestId, provider: request.provider, url: request.url, method, headers: request.headers });
}

/** Passes every event on to the call's handler, and ends the attempt's span with the response. */
class TracedHandler implements Dispatcher.DispatchHandler {
  private status: number | null = null;

  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly attempt: UpstreamAttempt,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage?: string): void {
    this.status = statusCode;
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Record<string, string | string[] | undefined>): void {
    this.attempt.end(this.status);
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.attempt.end(this.status, error);
    this.inner.onResponseError?.(controller, error);
  }
}

/** A call's options for undici's dispatch API (with a handler of its own, no response stream). */
function dispatchOptionsOf(http: UpstreamHttpOptions, request: UpstreamRequest, attempt: UpstreamAttempt | undefined): Dispatcher.DispatchOptions {
  const { origin, path } = splitUrl(request.url);
  const { body } = request;
  const headers = attempt?.headers ?? request.headers;
  return {
    origin,
    path,
    method: request.method ?? 'POST',
    // undici sends an iterable body chunked unless it is told the length.
    headers: Array.isArray(body) ? { ...headers, 'content-length': String(byteLengthOf(body)) } : headers,
    body: body as Dispatcher.DispatchOptions['body'],
    headersTimeout: http.timeoutMs,
    bodyTimeout: http.streamIdleTimeoutMs,
  };
}

function byteLengthOf(pieces: readonly Uint8Array[]): number {
  return pieces.reduce((total, piece) => total + piece.byteLength, 0);
}

/** Maps a failure to reach or hear from the provider to the gateway's error family. */
export function transportError(error: unknown, provider: string, signal?: AbortSignal): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    const message =
      error instanceof undiciErrors.BodyTimeoutError
        ? 'The model provider stopped sending its answer. Try again later.'
        : 'The model provider did not answer in time. Try again later.';
    return new GatewayError('provider_timeout', message, { logDetail: { provider, reason: error.name } });
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
    logDetail: { reason: code ?? (error as Error).name ?? 'unknown' },
    upstream: { provider, fault: 'unreachable' },
  });
}

/**
 * Reads a whole (error or JSON) body as text, bounded so a hostile upstream cannot exhaust
 * memory. Plain stream events, not an async iterator: this runs on every call.
 */
export function readBodyText(body: Dispatcher.ResponseData['body'], limitBytes = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        body.destroy();
        reject(tooLarge(size));
        return;
      }
      chunks.push(chunk);
    });
    let settled = false;
    body.once('end', () => {
      settled = true;
      resolve(withoutKnownSecrets(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8')));
    });
    body.once('error', (error) => {
      settled = true;
      reject(error);
    });
    body.once('close', () => {
      if (!settled) reject(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
