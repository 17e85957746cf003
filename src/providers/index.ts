export type * from './types.js';
export { ProviderRegistry } from './registry.js';
export type { MissingCredential, ProviderSummary } from './registry.js';
export { createProviders, missingCredentials } from './create.js';
export { patchJsonObject } from './shared/json-members.js';
export { providerJsonText, stringifyProviderValue } from './shared/provider-json.js';
export { MAX_AUDIO_SECONDS } from './shared/audio-duration.js';
