export { createAnthropicProvider, type AnthropicProviderOptions } from './provider.js';
export { DEFAULT_MAX_TOKENS } from './request-mapping.js';
