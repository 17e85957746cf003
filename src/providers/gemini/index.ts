import { keyAndBaseUrlDescriptor, type KeyAndBaseUrlSchema, type ProviderDescriptor } from '../descriptor.js';
import { createGeminiProvider } from './provider.js';

export { createGeminiProvider, type GeminiProviderOptions } from './provider.js';
export type { GeminiMethod } from './endpoints.js';

/** Google's Gemini API (native): `providers.gemini`, the models owned by google. */
export const geminiProvider: ProviderDescriptor<'gemini', 'google', KeyAndBaseUrlSchema> = {
  name: 'gemini',
  owner: 'google',
  ...keyAndBaseUrlDescriptor('https://generativelanguage.googleapis.com', 'GEMINI_API_KEY', 'GEMINI_BASE_URL'),
  create: ({ name, settings, http }) => createGeminiProvider({ name, baseUrl: settings.baseUrl, apiKey: settings.apiKey, http }),
};
