export { LiveSettings } from './service.js';
export type { LiveSettingsOptions } from './service.js';
export { LiveSettingsStore } from './store.js';
export type { AliasView, LiveSource, ModelSettingView, RoutingView } from './types.js';
