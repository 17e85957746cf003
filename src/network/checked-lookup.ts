import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { AddressPolicy } from './address-policy.js';

/** Resolves a host name to every address it has (injectable: tests resolve to what they need). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** A refusal of the address policy, as a connection error (`EADDRREFUSED`) carrying the reason. */
export class AddressRefusedError extends Error {
  override name = 'AddressRefusedError';
  readonly code = 'EADDRREFUSED';
}

/**
 * A net/tls lookup that refuses a host when any of its addresses is not allowed, and hands the
 * checked addresses to the socket (nothing resolves the name again between check and connect).
 */
export function checkedLookup(policy: AddressPolicy, resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolver(hostname).then(
      (addresses) => {
        const refused = addresses.map((address) => policy.check(address.address)).find((decision) => !decision.allowed);
        if (addresses.length === 0 || refused !== undefined) {
          const reason = refused !== undefined && !refused.allowed ? refused.reason : 'no address';
          callback(new AddressRefusedError(`${hostname} refused: ${reason}`), '', 4);
          return;
        }
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((address) => address.family === lookupOptions.family) : addresses;
        if (lookupOptions.all === true) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, wanted);
        else if (wanted[0] === undefined) callback(Object.assign(new Error(`${hostname}: no address of the wanted family`), { code: 'ENOTFOUND' }), '', 4);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 4),
    );
  };
}

/**
 * The policy's decision on a URL whose host is an address literal (a lookup is skipped for
 * those, so the check happens here); null when the host is a name, checked at lookup.
 */
export function literalAddressRefusal(policy: AddressPolicy, url: URL): string | null {
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) === 0) return null;
  const decision = policy.check(literal);
  return decision.allowed ? null : decision.reason;
}
