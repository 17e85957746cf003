import { randomBytes } from 'node:crypto';

/** Ids the gateway makes: a prefix and 128 random bits, hex. Never derived from caller input. */
export function newId(prefix: 'agt' | 'conv' | 'run' | 'asset'): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}
