/** The bounds of one namespace, from its policy. */
export interface NamespaceBounds {
  maxEntries: number;
  maxBytes: number;
}

/**
 * Where cached answers are kept: in this process (the default), or in Redis, shared by every
 * instance (REDIS_URL). Values are the entries' JSON text; keys are per namespace. A store
 * that fails rejects with its client's error: the cache then answers as a miss.
 */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  get(namespace: string, key: string): Promise<string | null>;
  /** Keeps `value` for `ttlMs`; resolves with how many entries the namespace's bounds evicted. */
  set(namespace: string, key: string, value: string, ttlMs: number, bounds: NamespaceBounds): Promise<number>;
  /** Removes a namespace and the namespaces inside it (`project:p` and `project:p:key:k`), or everything; resolves with the entries removed. */
  clear(namespace?: string): Promise<number>;
  /** Bytes of answers held in this process (a shared store: null, its size is Redis's). */
  heldBytes(): number | null;
  close(): Promise<void>;
}

/** Whether `namespace` is `within` or inside it. */
export function inNamespace(namespace: string, within: string): boolean {
  return namespace === within || namespace.startsWith(`${within}:`);
}
