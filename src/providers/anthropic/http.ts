import type { GatewayError } from '../../errors/index.js';
import { ERROR_BODY_LIMIT_BYTES, isAnswerStatus, readBodyText, sendUpstream, transportError, type UpstreamHttpOptions, type UpstreamRequest, type UpstreamResponse } from '../shared/upstream-http.js';
import type { CallContext } from '../../model-api/index.js';
import { upstreamError } from './errors.js';
import { ANTHROPIC_VERSION } from './wire.js';

export interface AnthropicProviderOptions {
  name: string;
  /** Without the version path, as Anthropic's SDKs take it (https://api.anthropic.com). */
  baseUrl: string;
  apiKey?: string;
  http: UpstreamHttpOptions;
  /**
   * Where a call goes when the host is not Anthropic's (Claude on Vertex AI): its URL and body
   * from the path, the model and the Messages body the adapter made.
   */
  route?: (path: string, upstreamModel: string, body: string | Buffer) => { url: string; body: string };
  /** Credential headers made per call instead of the key (Vertex AI's OAuth access token). */
  tokenHeaders?: () => Promise<Record<string, string>>;
}

/** The HTTP side every Anthropic capability shares: URLs, the credential headers, error mapping. */
export class AnthropicHttp {
  readonly provider: string;
  readonly headers: Readonly<Record<string, string>>;
  private readonly baseUrl: string;

  constructor(readonly options: AnthropicProviderOptions) {
    this.provider = options.name;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.headers = {
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      ...(options.apiKey !== undefined ? { 'x-api-key': options.apiKey } : {}),
    };
  }

  async request(path: string, headers: Record<string, string>, body: string | Buffer, call: CallContext & { upstreamModel: string }): Promise<UpstreamRequest> {
    const routed = this.options.route?.(path, call.upstreamModel, body) ?? { url: `${this.baseUrl}${path}`, body };
    const callHeaders = this.options.tokenHeaders === undefined ? headers : { ...headers, ...(await this.options.tokenHeaders()) };
    // Anthropic names its id for the call in `request-id`; it documents no header for a client's own id, so none is sent.
    return { url: routed.url, headers: callHeaders, body: routed.body, signal: call.signal, timeoutMs: call.timeoutMs, provider: this.provider, requestId: call.requestId, notes: call.notes, providerIdHeader: 'request-id' };
  }

  /** POSTs the request; an error status becomes the mapped GatewayError. */
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const response = await sendUpstream(this.options.http, request);
    if (isAnswerStatus(response.status)) return response;
    const text = await readBodyText(response.body, ERROR_BODY_LIMIT_BYTES).catch(() => '');
    throw this.failure(response.status, response.headers, text);
  }

  /** The whole body; a timeout or reset while reading it is a transport failure. */
  async readText(response: UpstreamResponse, signal: AbortSignal): Promise<string> {
    try {
      return await readBodyText(response.body);
    } catch (error) {
      throw transportError(error, this.provider, signal);
    }
  }

  failure(status: number, headers: UpstreamResponse['headers'], text: string): GatewayError {
    return upstreamError(this.provider, { status, headers }, text);
  }
}
