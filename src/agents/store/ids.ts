import { randomHex } from '../../crypto/index.js';

type IdPrefix = 'agt' | 'conv' | 'run' | 'asset';

/** Ids the gateway makes: a prefix and 128 random bits, hex. Never derived from caller input. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomHex(16)}`;
}

/** Whether `id` has the shape of an id newId made: anything else names nothing and needs no lookup. */
export function isMadeId(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && /^[0-9a-f]{32}$/.test(id.slice(prefix.length + 1));
}
