import { keyAndBaseUrlDescriptor, type KeyAndBaseUrlSchema, type ProviderDescriptor } from '../descriptor.js';
import type { Provider } from '../../model-api/index.js';
import { OpenAICompatibleChat } from './chat.js';
import { OpenAICompatibleClient, type OpenAICompatibleConfig } from './client.js';
import { OpenAICompatibleEmbeddings } from './embeddings.js';
import { OpenAICompatibleImages } from './images.js';
import { OpenAIModerations } from './moderations.js';
import { OpenAIResponses } from './responses.js';
import { OpenAICompatibleSpeech } from './speech.js';
import { OpenAICompatibleTranscription } from './transcription.js';

export type { OpenAICompatibleConfig } from './client.js';
export { OpenAICompatibleClient } from './client.js';
export { ChatCompletionChunks } from './chat.js';
export { OpenAICompatibleEmbeddings } from './embeddings.js';
export { usageFromWire } from './wire.js';

/**
 * OpenAI, or any OpenAI-compatible server (Ollama, vLLM, llama.cpp server, LM Studio, Groq…):
 * a faithful pass-through of every capability. Whether a model of it can do a capability is
 * the catalog's business (its mode); the server answers for itself.
 */
export function createOpenAICompatibleProvider(config: OpenAICompatibleConfig): Provider {
  const client = new OpenAICompatibleClient(config);
  return {
    name: config.name,
    acceptsRemoteImageUrls: true,
    chat: new OpenAICompatibleChat(client, config.takesTopK !== false, config.ownTokenizer === true),
    ...(config.servesResponses === true ? { responses: new OpenAIResponses(client) } : {}),
    embeddings: new OpenAICompatibleEmbeddings(client),
    images: new OpenAICompatibleImages(client),
    speech: new OpenAICompatibleSpeech(client),
    transcription: new OpenAICompatibleTranscription(client),
    ...(config.servesModeration === true ? { moderation: new OpenAIModerations(client) } : {}),
  };
}

/** OpenAI itself: the provider of `providers.openai`, which also serves OpenAI's own Responses API. */
export const openaiProvider: ProviderDescriptor<'openai', 'openai', KeyAndBaseUrlSchema> = {
  name: 'openai',
  owner: 'openai',
  ...keyAndBaseUrlDescriptor('https://api.openai.com/v1', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'),
  create: ({ name, settings, http }) => createOpenAICompatibleProvider({ name, ...settings, http, servesResponses: true, servesModeration: true, takesTopK: false, ownTokenizer: true }),
};
