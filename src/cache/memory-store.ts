import { inNamespace, type CacheStore, type NamespaceBounds } from './cache-store.js';
import type { VectorEntry } from './semantic.js';

interface Held {
  value: string;
  expiresAt: number;
  bytes: number;
}

interface Namespace {
  /** In use order, least recently used first (a Map keeps insertion order; a read moves the entry last). */
  entries: Map<string, Held>;
  bytes: number;
  /** Semantic entries' vectors by prefix and key (`prefix:key`), least recently used first. */
  vectors: Map<string, VectorEntry & { prefix: string; expiresAt: number }>;
}

/** What a held value counts toward its namespace's maxBytes: the characters of its text and key (as the Redis store counts their bytes; JSON is mostly ASCII). */
function bytesOf(key: string, value: string): number {
  return key.length + value.length;
}

/** Cached answers in this process: per namespace, bounded in entries and bytes, least recently used evicted first. */
export class MemoryCacheStore implements CacheStore {
  readonly kind = 'memory' as const;
  private readonly namespaces = new Map<string, Namespace>();
  private held = 0;

  constructor(private readonly now: () => number = Date.now) {}

  get(namespace: string, key: string): Promise<string | null> {
    const space = this.namespaces.get(namespace);
    const entry = space?.entries.get(key);
    if (space === undefined || entry === undefined) return Promise.resolve(null);
    space.entries.delete(key);
    if (entry.expiresAt <= this.now()) {
      this.dropped(space, entry);
      return Promise.resolve(null);
    }
    space.entries.set(key, entry);
    return Promise.resolve(entry.value);
  }

  set(namespace: string, key: string, value: string, ttlMs: number, bounds: NamespaceBounds): Promise<number> {
    const space = this.spaceOf(namespace);
    const previous = space.entries.get(key);
    if (previous !== undefined) {
      space.entries.delete(key);
      this.dropped(space, previous);
    }
    const entry: Held = { value, expiresAt: this.now() + ttlMs, bytes: bytesOf(key, value) };
    space.entries.set(key, entry);
    space.bytes += entry.bytes;
    this.held += entry.bytes;
    let evicted = 0;
    const now = this.now();
    for (const [oldest, held] of space.entries) {
      if (space.entries.size <= bounds.maxEntries && space.bytes <= bounds.maxBytes) break;
      if (oldest === key) break;
      space.entries.delete(oldest);
      this.dropped(space, held);
      // An expired entry was gone already: only a live one counts as evicted.
      if (held.expiresAt > now) evicted += 1;
    }
    return Promise.resolve(evicted);
  }

  addVector(namespace: string, prefix: string, entry: VectorEntry, ttlMs: number, maxEntries: number): Promise<void> {
    const { vectors } = this.spaceOf(namespace);
    const id = `${prefix}:${entry.key}`;
    vectors.delete(id);
    vectors.set(id, { ...entry, prefix, expiresAt: this.now() + ttlMs });
    for (const oldest of vectors.keys()) {
      if (vectors.size <= maxEntries) break;
      vectors.delete(oldest);
    }
    return Promise.resolve();
  }

  vectors(namespace: string, prefix: string): Promise<VectorEntry[]> {
    const now = this.now();
    const found: VectorEntry[] = [];
    for (const held of this.namespaces.get(namespace)?.vectors.values() ?? []) {
      if (held.prefix === prefix && held.expiresAt > now) found.push({ key: held.key, vector: held.vector });
    }
    return Promise.resolve(found);
  }

  clear(namespace?: string): Promise<number> {
    let removed = 0;
    for (const [name, space] of this.namespaces) {
      if (namespace !== undefined && !inNamespace(name, namespace)) continue;
      removed += space.entries.size;
      this.held -= space.bytes;
      this.namespaces.delete(name);
    }
    return Promise.resolve(removed);
  }

  heldBytes(): number {
    return this.held;
  }

  close(): Promise<void> {
    this.namespaces.clear();
    this.held = 0;
    return Promise.resolve();
  }

  private spaceOf(namespace: string): Namespace {
    let space = this.namespaces.get(namespace);
    if (space === undefined) {
      space = { entries: new Map(), bytes: 0, vectors: new Map() };
      this.namespaces.set(namespace, space);
    }
    return space;
  }

  private dropped(space: Namespace, entry: Held): void {
    space.bytes -= entry.bytes;
    this.held -= entry.bytes;
  }
}
