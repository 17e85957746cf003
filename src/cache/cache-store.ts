import type { VectorEntry } from './semantic.js';

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
  /**
   * Keeps a semantic entry's vector under its prefix key (the conversation without its last
   * user turn), or moves it last in the namespace's use order; past `maxEntries` vectors in
   * the namespace the least recently used go.
   */
  addVector(namespace: string, prefix: string, entry: VectorEntry, ttlMs: number, maxEntries: number): Promise<void>;
  /** The vectors kept under a prefix key (as many as the namespace's bound allows). */
  vectors(namespace: string, prefix: string): Promise<VectorEntry[]>;
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
