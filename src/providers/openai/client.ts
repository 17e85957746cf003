import type { FormData } from 'undici';
import { GatewayError } from '../../errors/index.js';
import { mapUpstreamFailure, rateLimitRetryAfterOf } from '../shared/upstream-errors.js';
import type { JsonPieces } from '../shared/json-members.js';
import { startSseStream, type StreamFrames } from '../shared/sse-stream.js';
import { ERROR_BODY_LIMIT_BYTES, isAnswerStatus, sendUpstreamBuffered, type BufferedUpstreamResponse, type UpstreamHttpOptions, type UpstreamRequest } from '../shared/upstream-http.js';
import type { CallContext, EventStream, JsonObject, StreamEvent } from '../../model-api/index.js';
import { errorKindOf, errorMessageOf, errorParamOf, parseJson, parseJsonObjectWithList } from './wire.js';

/** How to reach one OpenAI-compatible provider (OpenAI itself or an operator-declared one). */
export interface OpenAICompatibleConfig {
  /** Provider name: `openai`, or the compatible provider's configured name. */
  name: string;
  /** Base URL including the version path, e.g. https://api.openai.com/v1 (SDK convention). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; local servers (Ollama, llama.cpp) may need none. */
  apiKey?: string | undefined;
  http: UpstreamHttpOptions;
  /**
   * Whether the server has OpenAI's Responses API (`POST /responses`), so Responses requests go
   * there untranslated: OpenAI itself; compatible servers implement it unevenly, so theirs are
   * translated to chat completions.
   */
  servesResponses?: boolean;
  /** Whether the server has OpenAI's moderation endpoint (`POST /moderations`): OpenAI itself only. */
  servesModeration?: boolean;
  /** The URL of an endpoint for a model, when the server puts the model in the path (Azure's deployments); default base URL + path. */
  urlOf?: (path: string, upstreamModel: string) => string;
  /** Credential headers instead of `Authorization: Bearer <apiKey>` (Azure's `api-key`). */
  credentialHeaders?: Record<string, string>;
  /** Credential headers made per call (a short-lived token, refreshed before it expires). */
  tokenHeaders?: () => Promise<Record<string, string>>;
  /** Whether chat completions sample by `top_k` (compatible servers do; OpenAI itself refuses the field). Default true. */
  takesTopK?: boolean;
  /** Whether its models count tokens as OpenAI's own do, so the gateway can count a prompt locally. Default false. */
  ownTokenizer?: boolean;
}

/** A call of any capability: its context and the model id it goes to. */
type ModelCall = CallContext & { upstreamModel: string };

/** A body already in bytes (see passThroughJson), or an object to serialise. */
type JsonPayload = JsonObject | Buffer | JsonPieces;

function jsonBody(payload: JsonPayload): Buffer | JsonPieces {
  return Buffer.isBuffer(payload) || Array.isArray(payload) ? payload : Buffer.from(JSON.stringify(payload));
}

/** The HTTP side of the adapter: URLs, credential headers and error mapping, decided once. */
export class OpenAICompatibleClient {
  readonly name: string;
  private readonly base: string;
  private readonly jsonHeaders: Record<string, string>;
  private readonly authHeaders: Record<string, string>;
  private readonly urls = new Map<string, string>();

  constructor(private readonly config: OpenAICompatibleConfig) {
    this.name = config.name;
    this.base = config.baseUrl.replace(/\/+$/, '');
    this.authHeaders = config.credentialHeaders ?? (config.apiKey !== undefined ? { authorization: `Bearer ${config.apiKey}` } : {});
    this.jsonHeaders = { ...this.authHeaders, 'content-type': 'application/json', accept: 'application/json' };
  }

  /**
   * POSTs JSON; resolves with the 2xx response's JSON object when its `list` member is a list
   * of objects (`choices`, `data`: what every OpenAI client reads first), rejects with the
   * mapped GatewayError otherwise.
   */
  async postJson(path: string, payload: JsonPayload, call: ModelCall, list: string): Promise<JsonObject> {
    const read = (text: string) => parseJsonObjectWithList(text, list);
    return (await this.postAndRead(path, payload, call, read, `a JSON object with a "${list}" list of objects`)).value;
  }

  /**
   * POSTs JSON; resolves with what `read` makes of the 2xx response's text and the bytes it
   * read, rejects with the mapped GatewayError otherwise. `read` returns undefined for a body
   * that is not what the endpoint answers (`expected`): a provider_error, never a 200 that
   * would break the caller's SDK.
   */
  async postAndRead<T>(
    path: string,
    payload: JsonPayload,
    call: ModelCall,
    read: (text: string) => T | undefined,
    expected: string,
  ): Promise<{ value: T; bytes: Buffer }> {
    const response = await this.postWhole(path, this.jsonHeaders, jsonBody(payload), call);
    const value = read(response.body.toString('utf8'));
    if (value === undefined) {
      throw new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', {
        logDetail: { reason: `response body is not ${expected}` },
        upstream: { provider: this.name, status: response.status },
      });
    }
    return { value, bytes: response.body };
  }

  /** POSTs JSON; resolves with the whole 2xx response (audio bytes and their type). */
  postForBytes(path: string, payload: JsonObject, call: ModelCall, accept: string): Promise<BufferedUpstreamResponse> {
    return this.postWhole(path, { ...this.jsonHeaders, accept }, jsonBody(payload), call);
  }

  /** POSTs a multipart form (undici sets the boundary content type); resolves with the whole 2xx response. */
  postForm(path: string, form: FormData, call: ModelCall): Promise<BufferedUpstreamResponse> {
    // UpstreamRequest types the body with the global FormData; the dispatcher wants undici's.
    return this.postWhole(path, this.authHeaders, form as unknown as globalThis.FormData, call);
  }

  /** POSTs JSON for a stream of server-sent events (see startSseStream). */
  async postForStream<D>(path: string, payload: Buffer | JsonPieces, call: ModelCall, frames: StreamFrames<StreamEvent<D>>): Promise<EventStream<StreamEvent<D>>> {
    const request = await this.withToken(this.request(path, { ...this.jsonHeaders, accept: 'text/event-stream' }, payload, call));
    return startSseStream(this.config.http, request, { frames, failure: (status, headers, text) => openAIFailure(this.name, status, headers, text) });
  }

  private async postWhole(path: string, headers: Record<string, string>, body: Buffer | JsonPieces | globalThis.FormData, call: ModelCall): Promise<BufferedUpstreamResponse> {
    const response = await sendUpstreamBuffered(this.config.http, await this.withToken(this.request(path, headers, body, call)));
    if (isAnswerStatus(response.status)) return response;
    throw openAIFailure(this.name, response.status, response.headers, response.body.length > ERROR_BODY_LIMIT_BYTES ? '' : response.body.toString('utf8'));
  }

  /**
   * The call's request with the gateway's request id in `X-Client-Request-Id`, which OpenAI
   * accepts and keeps (its support finds a call by it even when no response came back);
   * OpenAI-compatible servers ignore a header they do not know. The provider's own id comes
   * back in `x-request-id`.
   */
  private request(path: string, headers: Record<string, string>, body: Buffer | JsonPieces | globalThis.FormData, call: ModelCall): UpstreamRequest {
    return {
      url: this.config.urlOf === undefined ? this.urlOf(path) : this.config.urlOf(path, call.upstreamModel),
      headers: { ...headers, 'x-client-request-id': call.requestId },
      body,
      signal: call.signal,
      timeoutMs: call.timeoutMs,
      provider: this.name,
      requestId: call.requestId,
      notes: call.notes,
      providerIdHeader: 'x-request-id',
    };
  }

  /** The request with the per-call token headers, when the server takes a token. */
  private async withToken(request: UpstreamRequest): Promise<UpstreamRequest> {
    if (this.config.tokenHeaders === undefined) return request;
    return { ...request, headers: { ...request.headers, ...(await this.config.tokenHeaders()) } };
  }

  /**
   * One string per endpoint URL, made once: a URL joined for every call was a new string
   * whose hash the dispatcher's URL map computed again each time. The paths are the adapter's own constants.
   */
  private urlOf(path: string): string {
    let url = this.urls.get(path);
    if (url === undefined) {
      url = `${this.base}${path}`;
      this.urls.set(path, url);
    }
    return url;
  }
}

/** Maps an OpenAI-compatible error response (`{"error": {"message", "type", "param", "code"}}`) to the gateway's error family. */
export function openAIFailure(provider: string, status: number, headers: BufferedUpstreamResponse['headers'], text: string): GatewayError {
  const body = parseJson(text);
  const kind = errorKindOf(body);
  return mapUpstreamFailure({
    provider,
    status,
    upstreamMessage: errorMessageOf(body),
    ...kind,
    retryAfterSeconds: rateLimitRetryAfterOf(headers),
    // The call's body went upstream field for field: on the model endpoints the provider's param names the caller's field.
    callerParam: errorParamOf(body),
    // OpenAI says "out of credit / over the spend limit" with a 429 of this type: not a rate limit.
    accountRefused: status === 429 && (kind.upstreamType === 'insufficient_quota' || kind.upstreamCode === 'insufficient_quota'),
  });
}
