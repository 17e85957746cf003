import { float32Base64 } from '../shared/embedding-encoding.js';
import { passThroughJson } from '../shared/json-members.js';
import { isRecord } from '../shared/message-content.js';
import type { EmbeddingCall, EmbeddingProvider, EmbeddingResult, JsonObject } from '../../model-api/index.js';
import type { OpenAICompatibleClient } from './client.js';
import { readEmbeddingList } from './embedding-list.js';
import { usageFromWire } from './wire.js';

/**
 * `POST /embeddings`, passed through: the provider's bytes go on, read without their float
 * vectors. Except when the caller asked for base64 and the provider answered float lists
 * (Ollama, LM Studio and other compatible servers ignore `encoding_format`): the SDKs ask
 * for base64 by default and would decode the lists into wrong vectors, so they are encoded here.
 */
export class OpenAICompatibleEmbeddings implements EmbeddingProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const payload = passThroughJson(call, { model: call.upstreamModel });
    const { value: list, bytes } = await this.client.postAndRead('/embeddings', payload, call, readEmbeddingList, 'a JSON object with a "data" list');
    const usage = usageFromWire(list.response.usage);
    if (call.body.encoding_format === 'base64' && list.vectors.dimensions !== null) return { response: base64Encoded(bytes), vectors: list.vectors, usage };
    return { response: list.response, responseJson: bytes, vectors: list.vectors, usage };
  }
}

/** The response with each float-list embedding as base64 (it was read once already, so it parses). */
function base64Encoded(bytes: Buffer): JsonObject {
  const response = JSON.parse(bytes.toString('utf8')) as JsonObject & { data: unknown[] };
  const data = response.data.map((item) =>
    isRecord(item) && Array.isArray(item.embedding) ? { ...item, embedding: float32Base64(item.embedding as number[]) } : item,
  );
  return { ...response, data };
}
