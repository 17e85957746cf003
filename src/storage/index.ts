export { openStorage, parseJsonColumn } from './database.js';
export type { Storage, StorageKind, StorageOptions } from './database.js';
export type * from './schema.js';
