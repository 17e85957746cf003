export { Router } from './router.js';
export type { RoutedCall, RoutingObserver, Served } from './router.js';
export { compilePlans } from './plan.js';
export type { Deployment, PlanSources, RoutePlan, RouteTarget } from './plan.js';
export { MemoryCooldowns } from './cooldowns.js';
export type { CooldownPolicy, Cooldowns } from './cooldowns.js';
export { createCooldowns } from './create-cooldowns.js';
export { failureClassOf } from './failure.js';
export { watchRoutingConfig } from './reload.js';
