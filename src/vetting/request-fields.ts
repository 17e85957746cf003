import { isEncryptedValue, type ProjectKeyring } from '../crypto/index.js';
import { invalidBody } from '../errors/index.js';

export const DEFAULT_ATTEMPTS = 3;

/**
 * Opens a field that accepts `enc::` values (docs/vetting.md). Only those four fields
 * call this; an `enc::` value anywhere else is plain text.
 */
export function openField(keyring: ProjectKeyring, value: string, field: string): string {
  return isEncryptedValue(value) ? keyring.decrypt(value, field) : value;
}

/** Attempts for one request: the default (never above the operator's limit), or the caller's if within it. */
export function attemptsAllowed(requested: number | undefined, field: string, limit: number): number {
  if (requested === undefined) return Math.min(DEFAULT_ATTEMPTS, limit);
  if (requested > limit) {
    throw invalidBody(`${field} is ${requested}, above this gateway's limit of ${limit}. Send ${limit} or fewer.`, field);
  }
  return requested;
}
