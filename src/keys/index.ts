export { SCOPES } from './types.js';
export type { Scope, KeyStatus, KeyLimits, ApiKeyView, Principal } from './types.js';
export { KeyStore, toKeyView } from './key-store.js';
export type { KeyRow, NewKey, KeyChanges } from './key-store.js';
export { KeyCache } from './key-cache.js';
export { Authenticator, assertModelAllowed, extractSecret } from './authenticate.js';
export { nextStatus } from './state-machine.js';
export type { KeyAction } from './state-machine.js';
export { SECRET_PREFIX, hashSecret, generateSecret, looksLikeSecret } from './secret.js';
