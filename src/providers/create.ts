import type { GatewayConfig } from '../config/index.js';
import type { Provider } from './types.js';

/** Builds every provider the config declares. */
export function createProviders(_config: GatewayConfig): Provider[] {
  return [];
}
