import type { RouteModule } from '../app.js';

/** Every route module of the gateway, in registration order. */
export const ROUTE_MODULES: readonly RouteModule[] = [];
