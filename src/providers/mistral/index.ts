import { keyAndBaseUrlDescriptor, type KeyAndBaseUrlSchema, type ProviderDescriptor, type ShippedModel } from '../descriptor.js';
import { OpenAICompatibleClient, OpenAICompatibleEmbeddings } from '../openai/index.js';
import { perMillion } from '../shared/shipped-price.js';
import { MistralChat } from './chat.js';

function chat(id: string, description: string, fields: Partial<ShippedModel>, pricing: ShippedModel['pricing']): ShippedModel {
  return { id, mode: 'chat', description, intelligence: 'High', speed: 'Fast', input_modalities: ['text'], output_modalities: ['text'], context_window: 131_072, max_output_tokens: 32_768, tools: true, pricing, ...fields };
}

/** Mistral's models, by Mistral's own ids; list prices in USD per 1M tokens (checked November 2026). */
const MISTRAL_MODELS: readonly ShippedModel[] = [
  chat('mistral-large-latest', 'Mistral Large: Mistral\'s flagship model for complex tasks.', { intelligence: 'Higher', speed: 'Medium', input_modalities: ['text', 'image'] }, perMillion(2, 6, null)),
  chat('mistral-medium-latest', 'Mistral Medium: frontier-class multimodal model at lower cost.', { input_modalities: ['text', 'image'] }, perMillion(0.4, 2, null)),
  chat('mistral-small-latest', 'Mistral Small: fast, low-cost model with image input.', { intelligence: 'Average', speed: 'Very Fast', input_modalities: ['text', 'image'] }, perMillion(0.1, 0.3, null)),
  chat('codestral-latest', 'Codestral: Mistral\'s model for code completion and generation.', { context_window: 256_000 }, perMillion(0.3, 0.9, null)),
  chat('magistral-medium-latest', 'Magistral Medium: Mistral\'s reasoning model.', { intelligence: 'Higher', speed: 'Medium', context_window: 40_960 }, perMillion(2, 5, null)),
  {
    id: 'mistral-embed',
    mode: 'embedding',
    description: 'Mistral Embed: text embeddings (1024 dimensions).',
    intelligence: 'Embedding',
    speed: 'Fast',
    input_modalities: ['text'],
    output_modalities: ['embedding'],
    tools: false,
    pricing: perMillion(0.1, null, null),
  },
];

/** Mistral's own API (`providers.mistral`): chat with its field names, tools, embeddings. */
export const mistralProvider: ProviderDescriptor<'mistral', 'mistral', KeyAndBaseUrlSchema> = {
  name: 'mistral',
  owner: 'mistral',
  ...keyAndBaseUrlDescriptor('https://api.mistral.ai/v1', 'MISTRAL_API_KEY', 'MISTRAL_BASE_URL'),
  models: () => MISTRAL_MODELS,
  create: ({ name, settings, http }) => {
    const client = new OpenAICompatibleClient({ name, apiKey: settings.apiKey, baseUrl: settings.baseUrl, http });
    return { name, acceptsRemoteImageUrls: true, chat: new MistralChat(client), embeddings: new OpenAICompatibleEmbeddings(client) };
  },
};
