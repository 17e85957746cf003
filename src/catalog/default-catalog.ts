import type { CatalogData } from './catalog.js';

// Seed data; the full shipped catalog replaces this.
export const DEFAULT_CATALOG: CatalogData = {
  models: [
    {
      id: 'gpt-4o-mini', provider: 'openai', ownedBy: 'openai', mode: 'chat', description: 'Fast, affordable GPT-4o variant.',
      intelligence: 'High', speed: 'Very Fast', inputModalities: ['text', 'image'], outputModalities: ['text'],
      contextWindow: 128000, maxOutputTokens: 16384, tools: true,
      pricing: { input_per_million: 0.15, output_per_million: 0.6, cached_input_per_million: 0.075, image_per_unit: null, audio_per_minute: null, status: 'documented', note: null },
    },
  ],
  legacyAliases: {},
  serviceAliases: { 'service-1': 'gpt-4o-mini' },
  defaultChatModel: 'gpt-4o-mini',
  safePrefixes: [
    { prefix: 'gpt-', provider: 'openai', ownedBy: 'openai', mode: 'chat' },
  ],
};
