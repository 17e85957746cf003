export { Keyring, keyIdOf, isEncryptedValue, ENCRYPTED_PREFIX } from './keyring.js';
export type { ProjectKeyring } from './keyring.js';
export { randomHex } from './random-hex.js';
