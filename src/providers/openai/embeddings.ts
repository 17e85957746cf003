import { passThroughJson } from '../shared/json-members.js';
import type { EmbeddingCall, EmbeddingProvider, EmbeddingResult } from '../types.js';
import type { OpenAICompatibleClient } from './client.js';
import { parseJsonObject, usageFromWire } from './wire.js';

/** `POST /embeddings`, passed through. */
export class OpenAICompatibleEmbeddings implements EmbeddingProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const { value: json, bytes } = await this.client.postAndRead('/embeddings', passThroughJson(call, { model: call.upstreamModel }), call, parseJsonObject);
    return { response: json, responseJson: bytes, usage: usageFromWire(json.usage) };
  }
}
