import { vendorSettingsSchema, type ProviderDescriptor } from '../descriptor.js';
import { createAnthropicProvider } from './provider.js';

export { createAnthropicProvider, type AnthropicProviderOptions } from './provider.js';
export { DEFAULT_MAX_TOKENS } from './request-mapping.js';

/** Anthropic's Messages API (native): `providers.anthropic`. */
export const anthropicProvider: ProviderDescriptor<'anthropic', 'anthropic'> = {
  name: 'anthropic',
  owner: 'anthropic',
  settings: vendorSettingsSchema('https://api.anthropic.com'),
  environment: { apiKey: 'ANTHROPIC_API_KEY', baseUrl: 'ANTHROPIC_BASE_URL' },
  create: createAnthropicProvider,
};
