import { passThroughJson } from '../shared/json-members.js';
import type { EmbeddingCall, EmbeddingProvider, EmbeddingResult } from '../types.js';
import type { OpenAICompatibleClient } from './client.js';
import { readEmbeddingList } from './embedding-list.js';
import { usageFromWire } from './wire.js';

/** `POST /embeddings`, passed through: the provider's bytes go on, read without their float vectors. */
export class OpenAICompatibleEmbeddings implements EmbeddingProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const payload = passThroughJson(call, { model: call.upstreamModel });
    const { value: list, bytes } = await this.client.postAndRead('/embeddings', payload, call, readEmbeddingList, 'a JSON object with a "data" list');
    return { response: list.response, responseJson: bytes, vectors: list.vectors, usage: usageFromWire(list.response.usage) };
  }
}
