import { invalidBody } from '../../errors/index.js';
import type { EmbeddingCall, EmbeddingProvider, EmbeddingResult, JsonObject } from '../../model-api/index.js';
import { tokenCount } from '../shared/token-count.js';
import { isRecord } from '../shared/message-content.js';
import { malformedResponse } from './converse-response.js';
import type { BedrockHttp } from './http.js';

function inputsOf(body: JsonObject): string[] {
  const input = body.input;
  const inputs = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((item): item is string => typeof item === 'string')) {
    throw invalidBody('input must be a string or an array of strings for this model (token arrays are not taken).', 'input');
  }
  return inputs;
}

function headerCount(headers: Record<string, string | string[] | undefined>, name: string): number | null {
  const value = headers[name];
  return tokenCount(Number(Array.isArray(value) ? value[0] : value));
}

function parse(provider: string, text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) return value;
  } catch {
    // Falls through to the error below.
  }
  throw malformedResponse(provider, 'embedding response body is not a JSON object');
}

function isVector(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'number' && Number.isFinite(item));
}

/**
 * Embeddings through InvokeModel in each family's own body: Titan Text Embeddings take one
 * `inputText` per call (so several inputs are several calls), Cohere Embed takes `texts` at once.
 */
export class BedrockEmbeddings implements EmbeddingProvider {
  constructor(private readonly http: BedrockHttp) {}

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const inputs = inputsOf(call.body);
    const model = call.upstreamModel;
    let vectors: number[][];
    let promptTokens = 0;
    if (model.startsWith('amazon.titan-embed')) {
      const dimensions = typeof call.body.dimensions === 'number' ? { dimensions: call.body.dimensions } : {};
      const answers = await Promise.all(inputs.map((inputText) => this.http.post(model, 'invoke', JSON.stringify({ inputText, ...dimensions }), call)));
      vectors = answers.map((answer) => {
        const body = parse(this.http.provider, answer.body.toString('utf8'));
        if (!isVector(body.embedding)) throw malformedResponse(this.http.provider, 'Titan answer has no embedding');
        promptTokens += tokenCount(body.inputTextTokenCount) ?? 0;
        return body.embedding;
      });
    } else if (model.startsWith('cohere.embed')) {
      const inputType = typeof call.body.input_type === 'string' ? call.body.input_type : 'search_document';
      const answer = await this.http.post(model, 'invoke', JSON.stringify({ texts: inputs, input_type: inputType }), call);
      const body = parse(this.http.provider, answer.body.toString('utf8'));
      const embeddings = isRecord(body.embeddings) ? body.embeddings.float : body.embeddings;
      if (!Array.isArray(embeddings) || !embeddings.every(isVector) || embeddings.length !== inputs.length) throw malformedResponse(this.http.provider, 'Cohere answer has no embedding per text');
      vectors = embeddings;
      promptTokens = headerCount(answer.headers, 'x-amzn-bedrock-input-token-count') ?? 0;
    } else {
      throw invalidBody(`The Bedrock model ${model} is not an embedding model the gateway knows (Titan Text Embeddings or Cohere Embed).`, 'model');
    }
    const base64 = call.body.encoding_format === 'base64';
    const usage = { promptTokens, completionTokens: 0, totalTokens: promptTokens, cachedPromptTokens: null };
    return {
      response: {
        object: 'list',
        data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector })),
        model,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      },
      vectors: { count: vectors.length, dimensions: vectors[0]?.length ?? null },
      usage,
    };
  }
}
