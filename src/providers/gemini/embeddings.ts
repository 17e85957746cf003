import { invalidBody } from '../../errors/index.js';
import { float32Base64 } from '../shared/embedding-encoding.js';
import type { EmbeddingResult, JsonObject } from '../../model-api/index.js';
import { modelResourceName } from './endpoints.js';
import { usageOf } from './response-mapping.js';
import type { BatchEmbedContentsRequest, BatchEmbedContentsResponse } from './wire.js';

/*
 * OpenAI embeddings ↔ Gemini batchEmbedContents: each input string is one EmbedContentRequest,
 * the embeddings come back in the same order as the OpenAI list shape.
 */

function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === 'string')) return input;
  throw invalidBody('input must be a string or a non-empty array of strings; this model does not take token arrays.', 'input');
}

export function toBatchEmbedRequest(body: JsonObject, upstreamModel: string): BatchEmbedContentsRequest {
  const dimensions = body.dimensions;
  if (dimensions !== undefined && (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1)) {
    throw invalidBody('dimensions must be a positive integer.', 'dimensions');
  }
  if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== 'base64') {
    throw invalidBody('encoding_format must be float or base64.', 'encoding_format');
  }
  const model = modelResourceName(upstreamModel);
  return {
    requests: inputsOf(body.input).map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}),
    })),
  };
}

function encode(values: number[], format: unknown): number[] | string {
  return format === 'base64' ? float32Base64(values) : values;
}

export function toEmbeddingResult(response: BatchEmbedContentsResponse, body: JsonObject, upstreamModel: string): EmbeddingResult {
  const usage = usageOf(response.usageMetadata);
  const data = response.embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding: encode(embedding.values, body.encoding_format) }));
  const first = data[0]?.embedding;
  return {
    response: {
      object: 'list',
      data,
      model: upstreamModel,
      // Gemini does not report embedding tokens: the body keeps OpenAI's shape, the accounting keeps "not reported".
      usage: { prompt_tokens: usage?.promptTokens ?? 0, total_tokens: usage?.totalTokens ?? 0 },
    },
    vectors: { count: data.length, dimensions: Array.isArray(first) ? first.length : null },
    usage,
  };
}
