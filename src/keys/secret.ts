import { hash, randomInt } from 'node:crypto';

export const SECRET_PREFIX = 'sk-mg-';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;

/** A new secret: the fixed prefix and 40 uniformly random base62 characters (~238 bits). */
export function generateSecret(): string {
  let body = '';
  for (let i = 0; i < SECRET_LENGTH; i += 1) body += BASE62[randomInt(BASE62.length)];
  return `${SECRET_PREFIX}${body}`;
}

/**
 * The only form of a secret that is stored. Secrets are high-entropy, so a plain SHA-256
 * suffices. One-shot `hash` (every keyed request runs this): a third of createHash's cost.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function looksLikeSecret(value: string): boolean {
  return value.startsWith(SECRET_PREFIX) && value.length >= SECRET_PREFIX.length + 32 && /^[A-Za-z0-9]+$/.test(value.slice(SECRET_PREFIX.length));
}

export function fingerprintOf(keyId: string, last4: string): string {
  return `${keyId}…${last4}`;
}
