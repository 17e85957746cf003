export { AddressPolicy, AddressPolicyError, parseCidr, parseIp } from './address-policy.js';
export type { AddressDecision } from './address-policy.js';
export { AddressRefusedError, checkedLookup, literalAddressRefusal, systemResolver } from './checked-lookup.js';
export type { Resolver } from './checked-lookup.js';
export { cachedLookup } from './cached-lookup.js';
export type { CachedLookupOptions } from './cached-lookup.js';
