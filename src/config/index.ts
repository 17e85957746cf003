export { loadConfig, loadedConfigFile, ConfigError } from './load.js';
export type { CommandLineSettings, LoadOptions } from './load.js';
export { configuredCredentials, resolveSecrets, findAdminToken } from './secrets.js';
export type { GatewaySecrets } from './secrets.js';
export { ENVIRONMENT_SETTINGS } from './env.js';
export { ConfigSchema, RoutingEntrySchema, MAX_TIMER_MS, timerDelay } from './schema.js';
export type { GatewayConfig, ModelOverride, CompatibleProviderConfig, ModelMode, RoutingEntry, DeploymentConfig, FailureClass } from './schema.js';
export { describeConnectionUrl, describeRedis, describeStorage, workerCount } from './deployment.js';
export { closestIds } from './closest-names.js';
