import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { systemResolver, type Resolver } from './checked-lookup.js';

export interface CachedLookupOptions {
  /** How long a name's addresses are used before they are resolved again (default 30 s). */
  ttlMs?: number;
  resolver?: Resolver;
  now?: () => number;
}

interface Entry {
  addresses: LookupAddress[];
  resolvedAt: number;
}

/**
 * A net/tls lookup that remembers each host's addresses. The system resolver runs on libuv's
 * thread pool, which scrypt and file reads share: a name resolved once is answered from memory
 * (after its TTL, still from memory while it is resolved again in the background), so a busy
 * pool never stalls a provider call. Concurrent look-ups of one name share one resolution;
 * a failed refresh keeps the addresses known.
 */
export function cachedLookup(options: CachedLookupOptions = {}): LookupFunction {
  const ttlMs = options.ttlMs ?? 30_000;
  const resolver = options.resolver ?? systemResolver;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const resolving = new Map<string, Promise<LookupAddress[]>>();

  const resolve = (hostname: string): Promise<LookupAddress[]> => {
    let pending = resolving.get(hostname);
    if (pending === undefined) {
      pending = resolver(hostname)
        .then((addresses) => {
          if (addresses.length > 0) entries.set(hostname, { addresses, resolvedAt: now() });
          return addresses;
        })
        .finally(() => resolving.delete(hostname));
      resolving.set(hostname, pending);
    }
    return pending;
  };

  return (hostname, lookupOptions, callback) => {
    const answer = (addresses: LookupAddress[]) => {
      const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? addresses.filter((address) => address.family === lookupOptions.family) : addresses;
      if (lookupOptions.all === true) (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, wanted);
      else if (wanted[0] === undefined) callback(Object.assign(new Error(`${hostname}: no address of the wanted family`), { code: 'ENOTFOUND' }), '', 4);
      else callback(null, wanted[0].address, wanted[0].family);
    };
    const known = entries.get(hostname);
    if (known !== undefined) {
      // Stale: answered as known, refreshed once in the background (a failure keeps them).
      if (now() - known.resolvedAt >= ttlMs && !resolving.has(hostname)) resolve(hostname).catch(() => undefined);
      answer(known.addresses);
      return;
    }
    resolve(hostname).then(answer, (error: unknown) => callback(error as NodeJS.ErrnoException, '', 4));
  };
}
