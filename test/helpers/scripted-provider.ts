import type { ChatCall, ImageCall, JsonObject, Provider, TokenUsage } from '../../src/model-api/index.js';
import type { GeneratedImage, HttpCallRequest, HttpCallResponse, HttpCaller, RunMedia, StoredMedia } from '../../src/agents/runtime/types.js';

/** A 1x1 PNG. */
export const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export type ChatScript = (call: ChatCall, index: number) => string | Promise<string>;

/**
 * An in-process provider for runtime tests: answers chat calls from a script and image calls
 * with a PNG, and records every call it received.
 */
export class ScriptedProvider implements Provider {
  readonly name = 'scripted';
  readonly acceptsRemoteImageUrls: boolean;
  readonly chatCalls: ChatCall[] = [];
  readonly imageCalls: ImageCall[] = [];
  usage: TokenUsage = { promptTokens: 10, completionTokens: 5, totalTokens: 15, cachedPromptTokens: null };

  constructor(
    private readonly script: ChatScript = () => 'ok',
    options: { acceptsRemoteImageUrls?: boolean } = {},
  ) {
    this.acceptsRemoteImageUrls = options.acceptsRemoteImageUrls ?? true;
  }

  readonly chat = {
    complete: async (call: ChatCall) => {
      this.chatCalls.push(call);
      const content = await this.script(call, this.chatCalls.length - 1);
      const completion: JsonObject = { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
      return { completion, usage: this.usage };
    },
    stream: async () => {
      throw new Error('not used by agents');
    },
  };

  readonly images = {
    generate: async (call: ImageCall) => {
      this.imageCalls.push(call);
      const n = typeof call.body.n === 'number' ? call.body.n : 1;
      const data = Array.from({ length: n }, () => ({ b64_json: PNG_1X1.toString('base64') }));
      return { response: { created: 0, data }, imageCount: n, usage: null };
    },
  };
}

/** Media kept in memory: what the runtime loads and stores during unit tests. */
export class MemoryMedia implements RunMedia {
  readonly stored = new Map<string, StoredMedia>();
  private counter = 0;

  async load(assetId: string, maxBytes: number): Promise<StoredMedia | null> {
    const stored = this.stored.get(assetId);
    if (stored === undefined) return null;
    return stored.kind === 'inline' && stored.data.length > maxBytes ? { kind: 'over_budget' } : stored;
  }

  async storeGenerated(image: { data: Buffer } | { url: string }, nodeId: string): Promise<GeneratedImage> {
    this.counter += 1;
    const assetId = `asset_${nodeId}_${this.counter}`;
    this.stored.set(assetId, 'data' in image ? { kind: 'inline', mimeType: 'image/png', data: image.data } : { kind: 'url', url: image.url });
    return { assetId, url: `https://gateway.test/v1/assets/${assetId}`, mimeType: 'image/png' };
  }
}

/** An http caller that answers from a function and records requests. */
export class RecordingHttp implements HttpCaller {
  readonly requests: HttpCallRequest[] = [];

  constructor(private readonly answer: (request: HttpCallRequest) => HttpCallResponse = () => ({ status: 200, contentType: 'application/json', body: '{"result":"found"}' })) {}

  async call(request: HttpCallRequest): Promise<HttpCallResponse> {
    this.requests.push(request);
    return this.answer(request);
  }
}
