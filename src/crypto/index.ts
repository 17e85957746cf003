export { Keyring, keyIdOf, isEncryptedValue, ENCRYPTED_PREFIX } from './keyring.js';
