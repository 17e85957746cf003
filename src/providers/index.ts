export type * from './types.js';
export { ProviderRegistry } from './registry.js';
export { createProviders } from './create.js';
export { ProviderRequestIds } from './shared/provider-request-ids.js';
export { patchJsonObject } from './shared/json-members.js';
export { providerJsonText, stringifyProviderValue } from './shared/provider-json.js';
export { MAX_AUDIO_SECONDS } from './shared/audio-duration.js';
