import { GatewayError, invalidBody } from '../../errors/index.js';
import { createAnthropicProvider } from '../anthropic/index.js';
import { createGeminiProvider, type GeminiMethod } from '../gemini/index.js';
import { isRecord } from '../shared/message-content.js';
import { tokenCount } from '../shared/token-count.js';
import { mapUpstreamFailure, rateLimitRetryAfterOf } from '../shared/upstream-errors.js';
import { ERROR_BODY_LIMIT_BYTES, isAnswerStatus, sendUpstreamBuffered, type UpstreamHttpOptions } from '../shared/upstream-http.js';
import type { ChatModelProvider, EmbeddingCall, EmbeddingProvider, EmbeddingResult, GenerateContentProvider, MessagesProvider, Provider } from '../../model-api/index.js';
import { vertexTokenHeaders } from './access-tokens.js';
import { projectOf, type VertexSettings } from './settings.js';

/** The `anthropic_version` Claude on Vertex AI takes in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export interface VertexProviderOptions {
  name: string;
  settings: VertexSettings;
  http: UpstreamHttpOptions;
}

/** Claude's models on Vertex AI are Anthropic's publisher models; every other is Google's. */
export function publisherOf(modelId: string): 'anthropic' | 'google' {
  return modelId.startsWith('claude-') ? 'anthropic' : 'google';
}

/**
 * Vertex AI: Gemini through the Gemini adapter's own mapping on Vertex's publisher-model URLs,
 * Claude through the Anthropic adapter's mapping on `rawPredict` / `streamRawPredict` (the
 * Messages body without `model`, with `anthropic_version`), embeddings through `predict`;
 * every call with the service account's OAuth access token.
 */
export function createVertexProvider(options: VertexProviderOptions): Provider {
  const { settings, http, name } = options;
  const location = settings.location;
  const base = (settings.baseUrl ?? (location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`)).replace(/\/+$/, '');
  const modelUrl = (publisher: string, model: string, method: string) =>
    `${base}/v1/projects/${encodeURIComponent(projectOf(settings) ?? '')}/locations/${encodeURIComponent(location)}/publishers/${publisher}/models/${encodeURIComponent(model)}:${method}`;
  const tokenHeaders = vertexTokenHeaders(name, settings);

  const gemini = createGeminiProvider({
    name,
    baseUrl: base,
    apiKey: undefined,
    http,
    tokenHeaders,
    methodUrl: (model: string, method: GeminiMethod) => `${modelUrl('google', model, method)}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`,
  });
  const claude = createAnthropicProvider({
    name,
    baseUrl: base,
    http,
    tokenHeaders,
    route: (path, model, body) => {
      const parsed = JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : body) as Record<string, unknown>;
      if (path.endsWith('/count_tokens')) return { url: modelUrl('anthropic', 'count-tokens', 'rawPredict'), body: JSON.stringify({ ...parsed, model }) };
      const { model: _model, ...rest } = parsed;
      return { url: modelUrl('anthropic', model, rest.stream === true ? 'streamRawPredict' : 'rawPredict'), body: JSON.stringify({ ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION }) };
    },
  });
  const claudeChat = claude.chat!;
  const geminiChat = gemini.chat!;
  const chat: ChatModelProvider = {
    hintsDropped: (body) => claudeChat.hintsDropped?.(body) ?? [],
    complete: (call) => (publisherOf(call.upstreamModel) === 'anthropic' ? claudeChat : geminiChat).complete(call),
    stream: (call) => (publisherOf(call.upstreamModel) === 'anthropic' ? claudeChat : geminiChat).stream(call),
  };
  const claudeMessages = claude.messages!;
  const messages: MessagesProvider = {
    servesModel: (model) => publisherOf(model) === 'anthropic',
    create: (call) => claudeMessages.create(call),
    stream: (call) => claudeMessages.stream(call),
    countTokens: (call) => claudeMessages.countTokens(call),
  };
  const geminiApi = gemini.geminiApi!;
  const generative: GenerateContentProvider = {
    servesModel: (model) => publisherOf(model) === 'google',
    generate: (call) => geminiApi.generate(call),
    stream: (call) => geminiApi.stream(call),
    countTokens: (call) => geminiApi.countTokens(call),
  };
  return { name, acceptsRemoteImageUrls: false, chat, messages, geminiApi: generative, embeddings: new VertexEmbeddings(name, http, tokenHeaders, (model) => modelUrl('google', model, 'predict')) };
}

/** Google's `{"error": {"code", "message", "status"}}`. */
function googleErrorMessage(text: string): string | null {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } };
    return typeof body.error?.message === 'string' ? body.error.message : null;
  } catch {
    return null;
  }
}

/**
 * Embeddings through `predict`: `{"instances": [{"content"}]}` → `predictions[].embeddings`
 * with its `values` and `statistics.token_count`. Gemini's embedding model takes one instance
 * per request, so several inputs are several requests; the text-embedding models take them at once.
 */
class VertexEmbeddings implements EmbeddingProvider {
  constructor(
    private readonly provider: string,
    private readonly http: UpstreamHttpOptions,
    private readonly tokenHeaders: () => Promise<Record<string, string>>,
    private readonly urlOf: (model: string) => string,
  ) {}

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const input = call.body.input;
    const inputs = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((item): item is string => typeof item === 'string')) {
      throw invalidBody('input must be a string or a non-empty array of strings; this model does not take token arrays.', 'input');
    }
    const parameters = typeof call.body.dimensions === 'number' ? { parameters: { outputDimensionality: call.body.dimensions } } : {};
    const batches = call.upstreamModel.startsWith('gemini-embedding') ? inputs.map((text) => [text]) : [inputs];
    const answers = await Promise.all(batches.map((batch) => this.predict(call, { instances: batch.map((content) => ({ content })), ...parameters })));
    const predictions = answers.flat();
    let tokens = 0;
    const vectors = predictions.map((prediction) => {
      const embeddings = isRecord(prediction) && isRecord(prediction.embeddings) ? prediction.embeddings : undefined;
      const values = embeddings?.values;
      if (!Array.isArray(values) || !values.every((value) => typeof value === 'number')) throw malformed(this.provider, 'a prediction without embeddings.values');
      tokens += tokenCount(isRecord(embeddings!.statistics) ? embeddings!.statistics.token_count : undefined) ?? 0;
      return values as number[];
    });
    if (vectors.length !== inputs.length) throw malformed(this.provider, 'not one prediction per input');
    const base64 = call.body.encoding_format === 'base64';
    return {
      response: {
        object: 'list',
        data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector })),
        model: call.upstreamModel,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
      vectors: { count: vectors.length, dimensions: vectors[0]?.length ?? null },
      usage: { promptTokens: tokens, completionTokens: 0, totalTokens: tokens, cachedPromptTokens: null },
    };
  }

  private async predict(call: EmbeddingCall, body: Record<string, unknown>): Promise<unknown[]> {
    const response = await sendUpstreamBuffered(this.http, {
      url: this.urlOf(call.upstreamModel),
      headers: { 'content-type': 'application/json', ...(await this.tokenHeaders()) },
      body: JSON.stringify(body),
      signal: call.signal,
      timeoutMs: call.timeoutMs,
      provider: this.provider,
      requestId: call.requestId,
      notes: call.notes,
    });
    const text = response.body.length > ERROR_BODY_LIMIT_BYTES ? '' : response.body.toString('utf8');
    if (!isAnswerStatus(response.status)) {
      throw mapUpstreamFailure({ provider: this.provider, status: response.status, upstreamMessage: googleErrorMessage(text), retryAfterSeconds: rateLimitRetryAfterOf(response.headers) });
    }
    try {
      const answer = JSON.parse(text) as { predictions?: unknown };
      if (Array.isArray(answer.predictions)) return answer.predictions;
    } catch {
      // Reported below.
    }
    throw malformed(this.provider, 'predict answer has no predictions list');
  }
}

function malformed(provider: string, reason: string): GatewayError {
  return new GatewayError('provider_error', 'The model provider sent a response the gateway could not read. Try again later.', { logDetail: { provider, reason } });
}
