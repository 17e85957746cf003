export { openStorage, parseJsonColumn } from './database.js';
export type { Storage, StorageKind, StorageLocation, StorageOptions } from './database.js';
export { isStorageUnavailable, breaksConnection, whenStorageAnswers } from './faults.js';
export { storageAnswers } from './probe.js';
export type * from './schema.js';
export { listenForNotifications, notify } from './notifications.js';
export type { NotificationEvents, NotificationListener } from './notifications.js';
export { sharedStateRedisOptions } from './redis-options.js';
