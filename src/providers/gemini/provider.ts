import { GatewayError } from '../../errors/index.js';
import { fromCallerInput } from '../shared/provider-json.js';
import { startSseStream, type ChatFrames } from '../shared/sse-stream.js';
import { isAnswerStatus, readBodyText, sendUpstream, transportError, type UpstreamHttpOptions, type UpstreamRequest, type UpstreamResponse } from '../shared/upstream-http.js';
import type { CallContext, ChatCall, Provider } from '../../model-api/index.js';
import { toBatchEmbedRequest, toEmbeddingResult } from './embeddings.js';
import { methodUrl, modelResourceName, type GeminiMethod } from './endpoints.js';
import { failureOfErrorBody, failureOfResponse, geminiFailure, inCallerTerms, parseErrorBody } from './errors.js';
import { toImageResult, toPredictRequest } from './images.js';
import { searchDropped, toGenerateContentRequest } from './request-mapping.js';
import { toChatCompletion } from './response-mapping.js';
import { GeminiStreamMapper } from './stream-mapping.js';
import { callerBytes, createNativeGeminiApi } from './native-api.js';
import {
  checkBatchEmbedContentsResponse,
  checkGenerateContentResponse,
  checkPredictResponse,
  parseJson,
  type GenerateContentResponse,
} from './wire.js';

export interface GeminiProviderOptions {
  /** Registry name (`gemini`). */
  name: string;
  /** Host of the Gemini API, e.g. https://generativelanguage.googleapis.com (the adapter adds /v1beta). */
  baseUrl: string;
  apiKey: string | undefined;
  http: UpstreamHttpOptions;
  /** The URL of a method of a model, when the host is not the Gemini API's (Vertex AI's publisher models). */
  methodUrl?: (upstreamModel: string, method: GeminiMethod) => string;
  /** Credential headers made per call instead of the key (Vertex AI's OAuth access token). */
  tokenHeaders?: () => Promise<Record<string, string>>;
}

/** Chat fields generateContent has no member for (request metadata, OpenAI's service hints): left out and named. */
const GEMINI_HINT_FIELDS = ['user', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'safety_identifier', 'parallel_tool_calls', 'logit_bias', 'verbosity'];

interface ModelCall extends CallContext {
  upstreamModel: string;
}

/**
 * Google Gemini through its native API: chat (generateContent, streamGenerateContent),
 * embeddings (batchEmbedContents) and Imagen image generation (predict). Gemini cannot fetch
 * remote image URLs, so those are refused before any call.
 */
export function createGeminiProvider(options: GeminiProviderOptions): Provider {
  const provider = options.name;
  // The key goes in a header, never the query string, so it never lands in URLs or access logs.
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey !== undefined) headers['x-goog-api-key'] = options.apiKey;

  /** One method call of the model (the key in a header); `build` maps the caller's body. */
  function upstreamRequest(call: ModelCall, method: GeminiMethod, build: () => unknown): Promise<UpstreamRequest> {
    return requestWithBody(call, method, fromCallerInput(() => JSON.stringify(build())));
  }

  async function requestWithBody(call: ModelCall, method: GeminiMethod, body: string | Buffer): Promise<UpstreamRequest> {
    const url = options.methodUrl?.(call.upstreamModel, method) ?? methodUrl(options.baseUrl, call.upstreamModel, method);
    const callHeaders = options.tokenHeaders === undefined ? headers : { ...headers, ...(await options.tokenHeaders()) };
    return { url, headers: callHeaders, body, signal: call.signal, timeoutMs: call.timeoutMs, provider, requestId: call.requestId, notes: call.notes };
  }

  /** Posts one method call; a non-2xx answer is mapped with Gemini's error body. */
  async function post(call: ModelCall, method: GeminiMethod, build: () => unknown): Promise<UpstreamResponse> {
    const response = await sendUpstream(options.http, await upstreamRequest(call, method, build));
    if (!isAnswerStatus(response.status)) throw await failureOfResponse(response, provider);
    return response;
  }

  async function postForJson(call: ModelCall, method: GeminiMethod, build: () => unknown, body?: string | Buffer): Promise<unknown> {
    const response = body === undefined ? await post(call, method, build) : await sendUpstream(options.http, await requestWithBody(call, method, body));
    if (!isAnswerStatus(response.status)) throw await failureOfResponse(response, provider);
    let text: string;
    try {
      text = await readBodyText(response.body);
    } catch (error) {
      throw transportError(error, provider, call.signal);
    }
    return parseJson(text, provider, `${method} response`);
  }

  /**
   * Gemini names a generation by the `responseId` of its body (each frame of a stream repeats
   * it) rather than by a response header. It documents no header for a client's own id, so the
   * gateway sends none.
   */
  function noteResponseId(call: CallContext, response: GenerateContentResponse): void {
    if (call.notes !== undefined && response.responseId !== undefined && response.responseId.length > 0) call.notes.providerRequestId = response.responseId.slice(0, 200);
  }

  /** One stream frame: a GenerateContentResponse, or an error Gemini sent inside the HTTP 200. */
  function parseFrame(data: string): GenerateContentResponse {
    const value = parseJson(data, provider, 'stream frame');
    const error = parseErrorBody(value);
    if (error !== null) throw geminiFailure({ provider, status: error.code ?? 500, body: value });
    return checkGenerateContentResponse(value, provider);
  }

  /**
   * The chat events of a stream. Gemini has no end-of-stream marker: a stream that ends before
   * every candidate got its finishReason was cut off.
   */
  function streamFrames(call: ChatCall): ChatFrames {
    const mapper = new GeminiStreamMapper(call.upstreamModel, provider);
    return {
      read(message, events) {
        const frame = parseFrame(message.data);
        noteResponseId(call, frame);
        for (const event of mapper.map(frame)) events.push(event);
        return false;
      },
      endedEarly() {
        if (mapper.isComplete()) return null;
        return new GatewayError('provider_error', 'The model provider ended the stream before the answer was complete. Try again.', {
          logDetail: { provider, reason: 'stream truncated' },
        });
      },
      beforeFailure(events) {
        // Counted; the caller gets no usage chunk after a failed stream.
        const usage = mapper.unreportedUsage();
        if (usage !== null) events.push({ type: 'usage-reported', usage: usage.usage });
      },
    };
  }

  return {
    name: provider,
    acceptsRemoteImageUrls: false,
    chat: {
      hintsDropped: (body, extensions, upstreamModel = '') => {
        const dropped = GEMINI_HINT_FIELDS.filter((field) => body[field] !== undefined && body[field] !== null);
        const search = searchDropped({ body, extensions }, upstreamModel);
        return search === null ? dropped : [...dropped, search];
      },
      async complete(call) {
        const value = await postForJson(call, 'generateContent', () => toGenerateContentRequest(call, call.upstreamModel, provider)).catch((error: unknown) => {
          throw error instanceof GatewayError ? inCallerTerms(error, call.body) : error;
        });
        const response = checkGenerateContentResponse(value, provider);
        noteResponseId(call, response);
        return toChatCompletion(response, call.upstreamModel, provider);
      },
      async stream(call) {
        const request = await upstreamRequest(call, 'streamGenerateContent', () => toGenerateContentRequest(call, call.upstreamModel, provider));
        return startSseStream(options.http, request, {
          frames: streamFrames(call),
          failure: (status, responseHeaders, text) => inCallerTerms(failureOfErrorBody(provider, status, responseHeaders, text), call.body),
        });
      },
      // countTokens of the whole generateContent request, so the system instruction and tools count too.
      async countTokens(call) {
        const value = await postForJson(call, 'countTokens', () => ({ generateContentRequest: { model: modelResourceName(call.upstreamModel), ...toGenerateContentRequest(call, call.upstreamModel, provider) } }));
        const total = (value as { totalTokens?: unknown } | null)?.totalTokens;
        if (typeof total !== 'number' || !Number.isInteger(total) || total < 0) {
          throw new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', { logDetail: { provider, reason: 'countTokens body has no totalTokens' } });
        }
        return total;
      },
    },
    geminiApi: createNativeGeminiApi({
      provider,
      generate: async (call) => {
        const value = await postForJson(call, 'generateContent', () => call.body, callerBytes(call));
        noteResponseId(call, checkGenerateContentResponse(value, provider));
        return value;
      },
      stream: async (call, frames) =>
        startSseStream(options.http, await requestWithBody(call, 'streamGenerateContent', callerBytes(call)), {
          frames: frames((frame) => noteResponseId(call, frame), parseFrame),
          failure: (status, responseHeaders, text) => failureOfErrorBody(provider, status, responseHeaders, text),
        }),
      countTokens: (call) => postForJson(call, 'countTokens', () => call.body, callerBytes(call)),
    }),
    embeddings: {
      async embed(call) {
        const value = await postForJson(call, 'batchEmbedContents', () => toBatchEmbedRequest(call.body, call.upstreamModel));
        return toEmbeddingResult(checkBatchEmbedContentsResponse(value, provider), call.body, call.upstreamModel);
      },
    },
    images: {
      async generate(call) {
        const value = await postForJson(call, 'predict', () => toPredictRequest(call.body));
        return toImageResult(checkPredictResponse(value, provider));
      },
    },
  };
}
