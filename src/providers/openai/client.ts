import type { FormData } from 'undici';
import { GatewayError } from '../../errors/index.js';
import { mapUpstreamFailure, retryAfterOf } from '../shared/upstream-errors.js';
import { readBodyText, sendUpstream, transportError, type UpstreamHttpOptions, type UpstreamResponse } from '../shared/upstream-http.js';
import type { CallContext, JsonObject } from '../types.js';
import { errorKindOf, errorMessageOf, parseJson } from './wire.js';

/** How to reach one OpenAI-compatible provider (OpenAI itself or an operator-declared one). */
export interface OpenAICompatibleConfig {
  /** Provider name: `openai`, or the compatible provider's configured name. */
  name: string;
  /** Base URL including the version path, e.g. https://api.openai.com/v1 (SDK convention). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; local servers (Ollama, llama.cpp) may need none. */
  apiKey?: string | undefined;
  http: UpstreamHttpOptions;
}

const ERROR_BODY_LIMIT = 1024 * 1024;

/** The HTTP side of the adapter: URLs, credential headers and error mapping, decided once. */
export class OpenAICompatibleClient {
  readonly name: string;
  private readonly base: string;
  private readonly jsonHeaders: Record<string, string>;
  private readonly authHeaders: Record<string, string>;

  constructor(private readonly config: OpenAICompatibleConfig) {
    this.name = config.name;
    this.base = config.baseUrl.replace(/\/+$/, '');
    this.authHeaders = config.apiKey !== undefined ? { authorization: `Bearer ${config.apiKey}` } : {};
    this.jsonHeaders = { ...this.authHeaders, 'content-type': 'application/json', accept: 'application/json' };
  }

  /** POSTs a JSON body; resolves with a 2xx response, rejects with the mapped GatewayError otherwise. */
  postJson(path: string, payload: JsonObject, call: CallContext, accept?: string): Promise<UpstreamResponse> {
    const headers = accept === undefined ? this.jsonHeaders : { ...this.jsonHeaders, accept };
    return this.send(path, headers, JSON.stringify(payload), call);
  }

  /** POSTs a multipart form (undici sets the boundary content type). */
  postForm(path: string, form: FormData, call: CallContext): Promise<UpstreamResponse> {
    return this.send(path, this.authHeaders, form, call);
  }

  /** Reads a 2xx JSON response body as an object. */
  async readJson(response: UpstreamResponse, call: CallContext): Promise<JsonObject> {
    let text: string;
    try {
      text = await readBodyText(response.body);
    } catch (error) {
      throw transportError(error, this.name, call.signal);
    }
    const json = parseJson(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', {
        logDetail: { provider: this.name, reason: 'response body is not a JSON object', upstreamStatus: response.status },
      });
    }
    return json as JsonObject;
  }

  private async send(path: string, headers: Record<string, string>, body: string | FormData, call: CallContext): Promise<UpstreamResponse> {
    const response = await sendUpstream(this.config.http, {
      url: `${this.base}${path}`,
      headers,
      // UpstreamRequest types the body with the global FormData; the dispatcher wants undici's.
      body: body as string | globalThis.FormData,
      signal: call.signal,
      provider: this.name,
    });
    if (response.status < 400) return response;
    throw await this.failure(response);
  }

  /** Maps an error response (`{"error": {"message", "type", "param", "code"}}`) to the §4 family. */
  private async failure(response: UpstreamResponse): Promise<GatewayError> {
    const text = await readBodyText(response.body, ERROR_BODY_LIMIT).catch(() => '');
    const body = parseJson(text);
    const error = mapUpstreamFailure({
      provider: this.name,
      status: response.status,
      upstreamMessage: errorMessageOf(body),
      retryAfterSeconds: retryAfterOf(response.headers['retry-after']),
    });
    const kind = errorKindOf(body);
    if (kind !== null && error.logDetail !== undefined) Object.assign(error.logDetail, { upstreamType: kind.type, upstreamCode: kind.code });
    return error;
  }
}
