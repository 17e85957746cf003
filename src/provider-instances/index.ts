export { ProviderInstances } from './service.js';
export type { ChangeAnnouncements, ProviderInstancesOptions } from './service.js';
export { ProviderInstanceStore, fingerprintOf } from './store.js';
export type { StoredInstance } from './store.js';
export { configuredEntries } from './sources.js';
export type { NewProviderInstanceInput, ProviderInstancePatch, ProviderInstanceView, ProviderKindView, ProviderSource, ProviderTestView } from './types.js';
