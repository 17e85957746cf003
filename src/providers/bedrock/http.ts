import type { GatewayError } from '../../errors/index.js';
import { mapUpstreamFailure, rateLimitRetryAfterOf } from '../shared/upstream-errors.js';
import { startSseStream, type StreamFrames } from '../shared/sse-stream.js';
import { ERROR_BODY_LIMIT_BYTES, isAnswerStatus, sendUpstreamBuffered, type BufferedUpstreamResponse, type UpstreamHttpOptions, type UpstreamRequest } from '../shared/upstream-http.js';
import type { CallContext, EventStream, StreamEvent } from '../../model-api/index.js';
import { awsEventStreamFraming, type AwsEventMessage } from './event-stream.js';
import { bedrockAuthoriser, type BedrockAuthoriser } from './signing.js';
import type { BedrockSettings } from './settings.js';

export interface BedrockProviderOptions {
  name: string;
  settings: BedrockSettings;
  http: UpstreamHttpOptions;
}

/** Bedrock's error body: `{"message": "…"}` (some services write `Message`), its kind in `x-amzn-ErrorType`. */
function errorMessageOf(text: string): string | null {
  try {
    const body = JSON.parse(text) as { message?: unknown; Message?: unknown };
    const message = body.message ?? body.Message;
    return typeof message === 'string' ? message : null;
  } catch {
    return text.length > 0 ? text.slice(0, 500) : null;
  }
}

/** `ThrottlingException` of `x-amzn-ErrorType: ThrottlingException:http://internal.amazon.com/…`. */
function errorTypeOf(headers: BufferedUpstreamResponse['headers']): string | null {
  const value = headers['x-amzn-errortype'];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined ? null : (text.split(':')[0] ?? null);
}

/** Maps a Bedrock error status and body to the gateway's error family. */
export function bedrockFailure(provider: string, status: number, headers: BufferedUpstreamResponse['headers'], text: string): GatewayError {
  const type = errorTypeOf(headers);
  // A model that is not enabled for the account is a 403 AccessDeniedException; a model id unknown here, 404 or a 400 ValidationException.
  return mapUpstreamFailure({ provider, status, upstreamMessage: errorMessageOf(text), retryAfterSeconds: rateLimitRetryAfterOf(headers), ...(type === null ? {} : { upstreamType: type }) });
}

/** The HTTP side every Bedrock capability shares: the runtime URL, signing, error mapping. */
export class BedrockHttp {
  readonly provider: string;
  private readonly base: string;
  private readonly authoriser: BedrockAuthoriser;

  constructor(readonly options: BedrockProviderOptions) {
    this.provider = options.name;
    this.base = (options.settings.baseUrl ?? `https://bedrock-runtime.${options.settings.region ?? 'us-east-1'}.amazonaws.com`).replace(/\/+$/, '');
    this.authoriser = bedrockAuthoriser(options.name, options.settings);
  }

  /** `POST /model/{modelId}/{operation}`: the id percent-encoded as one path segment (`:` of `…-v1:0` included). */
  private async request(modelId: string, operation: string, body: string, accept: string, call: CallContext): Promise<UpstreamRequest> {
    const url = new URL(`${this.base}/model/${encodeURIComponent(modelId)}/${operation}`);
    const headers = await this.authoriser.headers(url, { 'content-type': 'application/json', accept }, body);
    // AWS names its id for the call in x-amzn-requestid; it takes no id of the caller's.
    return { url: url.toString(), headers, body, signal: call.signal, timeoutMs: call.timeoutMs, provider: this.provider, requestId: call.requestId, notes: call.notes, providerIdHeader: 'x-amzn-requestid' };
  }

  /** POSTs JSON and resolves with the whole 2xx answer; an error status rejects with the mapped GatewayError. */
  async post(modelId: string, operation: string, body: string, call: CallContext): Promise<BufferedUpstreamResponse> {
    const response = await sendUpstreamBuffered(this.options.http, await this.request(modelId, operation, body, 'application/json', call));
    if (isAnswerStatus(response.status)) return response;
    throw bedrockFailure(this.provider, response.status, response.headers, response.body.length > ERROR_BODY_LIMIT_BYTES ? '' : response.body.toString('utf8'));
  }

  /** POSTs JSON for an answer in AWS's event stream; resolves once its first event was read. */
  async stream<D>(modelId: string, operation: string, body: string, call: CallContext, frames: StreamFrames<StreamEvent<D>, AwsEventMessage>): Promise<EventStream<StreamEvent<D>>> {
    const request = await this.request(modelId, operation, body, 'application/vnd.amazon.eventstream', call);
    return startSseStream<D, AwsEventMessage>(this.options.http, request, {
      frames,
      framing: await awsEventStreamFraming(),
      failure: (status, headers, text) => bedrockFailure(this.provider, status, headers, text),
    });
  }
}
