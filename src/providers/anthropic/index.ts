import { keyAndBaseUrlDescriptor, type KeyAndBaseUrlSchema, type ProviderDescriptor } from '../descriptor.js';
import { createAnthropicProvider } from './provider.js';

export { createAnthropicProvider, type AnthropicProviderOptions } from './provider.js';
export { DEFAULT_MAX_TOKENS } from './request-mapping.js';
export { claudeMessagesJson, NativeFrames as AnthropicMessagesFrames } from './messages.js';
export { openAiUsage, tokenUsageOf as anthropicUsageOf } from './response-mapping.js';
export { parseResponse as parseAnthropicMessage } from './wire.js';

/** Anthropic's Messages API (native): `providers.anthropic`. */
export const anthropicProvider: ProviderDescriptor<'anthropic', 'anthropic', KeyAndBaseUrlSchema> = {
  name: 'anthropic',
  owner: 'anthropic',
  ...keyAndBaseUrlDescriptor('https://api.anthropic.com', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'),
  create: ({ name, settings, http }) => createAnthropicProvider({ name, ...settings, http }),
};
