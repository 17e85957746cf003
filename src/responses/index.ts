export { ResponseStore } from './response-store.js';
export type { StoredResponse } from './response-store.js';
