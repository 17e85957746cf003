import type { Logger } from 'pino';
import type { KeyRow, KeyStore } from './key-store.js';
import { UnknownKeyLookups } from './unknown-key-lookups.js';

/** How far back each refresh looks, so a row committed late with an older timestamp is not missed. */
const REFRESH_OVERLAP_MS = 5_000;

/**
 * All keys in memory, by secret hash, so authenticating a known key never touches the
 * database. A secret it does not hold (a key created on another instance a moment ago) is
 * looked up in the store before it is refused. Changes made elsewhere arrive as `reload`s
 * when the deployment has a channel for them (key-propagation.ts), and in any case on the
 * refresh interval: every instance re-reads recently changed rows. Local changes apply at
 * once through `put`.
 */
export class KeyCache {
  private readonly byHash = new Map<string, KeyRow>();
  /** The hashes each key is held under: its secret's, and during a rotation's grace period the replaced one's (first is the current). */
  private readonly hashesById = new Map<string, readonly string[]>();
  private readonly unknown: UnknownKeyLookups;
  private lastRefreshStartedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly store: KeyStore,
    private readonly logger: Logger,
  ) {
    this.unknown = new UnknownKeyLookups(async (hash) => {
      const row = await store.findByHash(hash);
      if (row !== undefined) this.put(row);
      return row === undefined ? undefined : this.byHash.get(hash);
    }, logger);
  }

  async load(): Promise<void> {
    const startedAt = Date.now();
    for (const row of await this.store.list()) this.put(row);
    this.lastRefreshStartedAt = startedAt;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.refresh(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.refreshing;
  }

  /** Re-reads rows changed since the last refresh (with overlap). One refresh at a time. */
  refresh(): Promise<void> {
    this.refreshing ??= this.runRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async runRefresh(): Promise<void> {
    const startedAt = Date.now();
    try {
      const rows = await this.store.changedSince(this.lastRefreshStartedAt - REFRESH_OVERLAP_MS);
      for (const row of rows) this.put(row);
      this.lastRefreshStartedAt = startedAt;
    } catch (error) {
      // Keep serving from the cache; the next tick retries.
      this.logger.warn({ err: error }, 'key cache refresh failed');
    }
  }

  /** Re-reads one key another instance changed. A failure is left to the next refresh. */
  async reload(id: string): Promise<void> {
    try {
      const row = await this.store.find(id);
      if (row !== undefined) this.put(row);
    } catch (error) {
      this.logger.warn({ err: error, keyId: id }, 'could not re-read a key another instance changed; the next refresh will');
    }
  }

  /** Stores a row unless the cache already holds a newer version of it. */
  put(row: KeyRow): void {
    // A refresh that read the table before a local change must not undo that change.
    const current = this.findById(row.id);
    if (current !== undefined && current.updated_at > row.updated_at) return;
    const hashes = row.previous_secret_hash === null ? [row.secret_hash] : [row.secret_hash, row.previous_secret_hash];
    for (const held of this.hashesById.get(row.id) ?? []) if (!hashes.includes(held)) this.byHash.delete(held);
    for (const hash of hashes) {
      this.byHash.set(hash, row);
      this.unknown.forget(hash);
    }
    this.hashesById.set(row.id, hashes);
  }

  /** The key held under this secret hash: its current secret's, or (check isReplacedSecret) the one a rotation replaced. */
  findByHash(hash: string): KeyRow | undefined {
    return this.byHash.get(hash);
  }

  /**
   * The key with a secret hash this cache does not hold, from the store: undefined (at once, or
   * once the lookup ends) when the store has none, is failing, or is already asked too much.
   */
  lookUp(hash: string): Promise<KeyRow | undefined> | undefined {
    return this.unknown.lookUp(hash);
  }

  /** The key with this id, whatever its state. */
  findById(id: string): KeyRow | undefined {
    const hash = this.hashesById.get(id)?.[0];
    return hash === undefined ? undefined : this.byHash.get(hash);
  }
}
