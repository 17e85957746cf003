import { fromCallerInput } from '../shared/provider-json.js';
import type { ChatCall, ChatCompletionResult, ChatModelProvider, ChatStream, JsonObject, Provider } from '../../model-api/index.js';
import { hintsDroppedOf, toConverseRequest } from './converse-request.js';
import { toChatCompletion } from './converse-response.js';
import { ConverseChatFrames } from './converse-stream.js';
import { BedrockEmbeddings } from './embeddings.js';
import { BedrockHttp, type BedrockProviderOptions } from './http.js';
import { BedrockMessages } from './messages.js';
import { chatModelId } from './settings.js';

/**
 * AWS Bedrock: chat through Converse / ConverseStream (every model family, one shape), Claude's
 * Messages API natively through InvokeModel, embeddings of Titan and Cohere. Bedrock takes no
 * remote image URL: images and documents go as bytes.
 */
export function createBedrockProvider(options: BedrockProviderOptions): Provider {
  const http = new BedrockHttp(options);
  const modelIdOf = (upstreamId: string) => chatModelId(options.settings, upstreamId);
  return {
    name: options.name,
    acceptsRemoteImageUrls: false,
    chat: new BedrockChat(http, modelIdOf),
    messages: new BedrockMessages(http, modelIdOf),
    embeddings: new BedrockEmbeddings(http),
  };
}

class BedrockChat implements ChatModelProvider {
  constructor(
    private readonly http: BedrockHttp,
    private readonly modelIdOf: (upstreamId: string) => string,
  ) {}

  hintsDropped(body: JsonObject): string[] {
    return hintsDroppedOf(body);
  }

  async complete(call: ChatCall): Promise<ChatCompletionResult> {
    const body = fromCallerInput(() => JSON.stringify(toConverseRequest(call.body)));
    const response = await this.http.post(this.modelIdOf(call.upstreamModel), 'converse', body, call);
    return toChatCompletion(this.http.provider, response.body.toString('utf8'), call.upstreamModel, call.requestId, nowSeconds());
  }

  stream(call: ChatCall): Promise<ChatStream> {
    const body = fromCallerInput(() => JSON.stringify(toConverseRequest(call.body)));
    const frames = new ConverseChatFrames({ provider: this.http.provider, id: `chatcmpl-${call.requestId}`, model: call.upstreamModel, created: nowSeconds() });
    return this.http.stream(this.modelIdOf(call.upstreamModel), 'converse-stream', body, call, frames);
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
