import { readFileSync } from 'node:fs';

/** Version of the published interface description (the `version` of GET /v1/docs/metadata and the OpenAPI document). */
export const API_VERSION = '1.4.2';

/** The product's own version (package.json), read once. */
export const PRODUCT_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
