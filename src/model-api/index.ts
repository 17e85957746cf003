export type * from './types.js';
export { ModelModeSchema, ModelOverrideSchema } from './model-entry.js';
export type { ModelMode, ModelOverride } from './model-entry.js';
