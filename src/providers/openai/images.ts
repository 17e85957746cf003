import type { ImageCall, ImageProvider, ImageResult } from '../../model-api/index.js';
import type { OpenAICompatibleClient } from './client.js';
import { usageFromWire } from './wire.js';

/** `POST /images/generations`, passed through (`b64_json` or `url` data as the provider sent it). */
export class OpenAICompatibleImages implements ImageProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async generate(call: ImageCall): Promise<ImageResult> {
    const body = await this.client.postJson('/images/generations', { model: call.upstreamModel, ...call.body }, call, 'data');
    const imageCount = (body.data as unknown[]).length;
    return { response: body, imageCount, usage: usageFromWire(body.usage) };
  }
}
