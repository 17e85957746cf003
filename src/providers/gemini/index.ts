import { vendorSettingsSchema, type ProviderDescriptor } from '../descriptor.js';
import { createGeminiProvider } from './provider.js';

export { createGeminiProvider, type GeminiProviderOptions } from './provider.js';

/** Google's Gemini API (native): `providers.gemini`, the models owned by google. */
export const geminiProvider: ProviderDescriptor<'gemini', 'google'> = {
  name: 'gemini',
  owner: 'google',
  settings: vendorSettingsSchema('https://generativelanguage.googleapis.com'),
  environment: { apiKey: 'GEMINI_API_KEY', baseUrl: 'GEMINI_BASE_URL' },
  create: createGeminiProvider,
};
