import { keyAndBaseUrlDescriptor, type KeyAndBaseUrlSchema, type ProviderDescriptor, type ShippedModel } from '../descriptor.js';
import { OpenAICompatibleClient, OpenAICompatibleEmbeddings } from '../openai/index.js';
import { MistralChat } from './chat.js';

function price(input: number, output: number | null): NonNullable<ShippedModel['pricing']> {
  return { input_per_million: input, output_per_million: output, cached_input_per_million: null, cache_write_per_million: null, cache_write_1h_per_million: null, image_per_unit: null, audio_per_minute: null, status: 'documented', note: null, tiers: [] };
}

function chat(id: string, description: string, fields: Partial<ShippedModel>, pricing: ShippedModel['pricing']): ShippedModel {
  return { id, mode: 'chat', description, intelligence: 'High', speed: 'Fast', input_modalities: ['text'], output_modalities: ['text'], context_window: 131_072, max_output_tokens: 32_768, tools: true, pricing, ...fields };
}

/** Mistral's models, by Mistral's own ids; list prices in USD per 1M tokens (checked November 2026). */
const MISTRAL_MODELS: readonly ShippedModel[] = [
  chat('mistral-large-latest', 'Mistral Large: Mistral\'s flagship model for complex tasks.', { intelligence: 'Higher', speed: 'Medium', input_modalities: ['text', 'image'] }, price(2, 6)),
  chat('mistral-medium-latest', 'Mistral Medium: frontier-class multimodal model at lower cost.', { input_modalities: ['text', 'image'] }, price(0.4, 2)),
  chat('mistral-small-latest', 'Mistral Small: fast, low-cost model with image input.', { intelligence: 'Average', speed: 'Very Fast', input_modalities: ['text', 'image'] }, price(0.1, 0.3)),
  chat('codestral-latest', 'Codestral: Mistral\'s model for code completion and generation.', { context_window: 256_000 }, price(0.3, 0.9)),
  chat('magistral-medium-latest', 'Magistral Medium: Mistral\'s reasoning model.', { intelligence: 'Higher', speed: 'Medium', context_window: 40_960 }, price(2, 5)),
  {
    id: 'mistral-embed',
    mode: 'embedding',
    description: 'Mistral Embed: text embeddings (1024 dimensions).',
    intelligence: 'Embedding',
    speed: 'Fast',
    input_modalities: ['text'],
    output_modalities: ['embedding'],
    tools: false,
    pricing: price(0.1, null),
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
