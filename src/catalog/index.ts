export { Catalog } from './catalog.js';
export type { CatalogData, LiveCatalogLayer, ResolveOptions, SafePrefix } from './catalog.js';
export { DEFAULT_CATALOG } from './default-catalog.js';
export { ENDPOINT_BY_MODE } from './model-spec.js';
export { isPriced, tokenPricesFor } from './pricing.js';
export type { ModelSpec } from './model-spec.js';
export type * from './types.js';
