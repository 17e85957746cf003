export { ModelCalls, CheckedCall } from './model-calls.js';
export type { Capability, CallRequest, CallTarget, ProviderCall } from './model-calls.js';
export { settlementOf } from './settlement.js';
export { checkImageUrl, inspectMessages, parseDataUri } from './input-policy.js';
export type { ContentRules, DataUri } from './input-policy.js';
