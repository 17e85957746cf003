import { invalidBody } from '../../errors/index.js';
import type { JsonObject } from '../../model-api/index.js';

/** One `EmbedContentRequest`: the content to embed and how. */
export interface GeminiEmbedRequest extends JsonObject {
  content?: { parts?: JsonObject[] };
  model?: string;
  outputDimensionality?: number;
}

/** What an embedding call takes from Gemini API requests: the internal embeddings body, and the fields it leaves out. */
export interface DecodedEmbedding {
  body: JsonObject;
  dropped: string[];
}

/** Members of an EmbedContentRequest that tune the vectors for a use: Google's own, left out for the others and named. */
const TUNING_FIELDS = ['taskType', 'title'];

function textOf(request: GeminiEmbedRequest, param: string): string {
  const parts = request.content?.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw invalidBody(`${param}.content.parts must hold the text to embed.`, `${param}.content.parts`);
  return parts
    .map((part, index) => {
      if (typeof part.text !== 'string') throw invalidBody(`${param}.content.parts[${index}] must be a text part: only text is embedded.`, `${param}.content.parts[${index}]`);
      return part.text;
    })
    .join(' ');
}

/**
 * embedContent (one request) or batchEmbedContents (`requests`) as the internal embeddings
 * call: each content's text parts joined as one input, `outputDimensionality` as `dimensions`
 * (one for the batch: the first request's). `taskType` and `title` are dropped and named.
 */
export function decodeEmbedRequests(requests: readonly GeminiEmbedRequest[], param: (index: number) => string): DecodedEmbedding {
  if (requests.length === 0) throw invalidBody('requests must hold at least one EmbedContentRequest.', 'requests');
  const dropped: string[] = [];
  const input = requests.map((request, index) => {
    for (const field of TUNING_FIELDS) if (request[field] !== undefined) dropped.push(`${param(index)}.${field}`.replace(/^\./, ''));
    return textOf(request, param(index));
  });
  const dimensions = requests[0]?.outputDimensionality;
  const body: JsonObject = { input };
  if (dimensions !== undefined) body.dimensions = dimensions;
  return { body, dropped };
}

/** The internal embeddings answer's vectors as `{"embedding": {"values"}}` per request. */
export function embeddingsOf(response: JsonObject): { values: unknown }[] {
  const data = (Array.isArray(response.data) ? response.data : []) as { index?: number; embedding?: unknown }[];
  return [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((item) => ({ values: item.embedding }));
}
