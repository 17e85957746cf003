import type { Logger } from 'pino';
import type { KeyRow } from './key-store.js';
import { outageLog, type OutageLog } from './outage-log.js';

/** How long a secret the store did not know is refused without asking again. */
export const UNKNOWN_KEY_TTL_MS = 5_000;
/** Most secrets remembered as unknown; past it the oldest are forgotten first (~150 bytes each). */
export const UNKNOWN_KEYS_REMEMBERED = 10_000;
/** Store lookups run at once; the others wait their turn. */
export const CONCURRENT_LOOKUPS = 4;
/** Lookups waiting or running; a secret beyond them is refused without one. */
export const PENDING_LOOKUPS = 256;
/** Longest a request waits for its lookup before it is refused. */
export const LOOKUP_DEADLINE_MS = 3_000;

/**
 * Store lookups for secrets the key cache does not hold: a key created on another instance a
 * moment ago. Built so that unknown secrets cannot load the database: one lookup per secret
 * hash at a time (concurrent requests with it share it), a few lookups at once and a bounded
 * number pending, and a secret the store did not know refused without a lookup for a few
 * seconds. A lookup that fails or takes too long finds nothing: the request is refused, never
 * let in (fail closed), and the failure is not remembered, so the key works once the store answers.
 */
export class UnknownKeyLookups {
  private readonly pending = new Map<string, Promise<KeyRow | undefined>>();
  /** Hash → when it may be looked up again. Insertion order is expiry order: one TTL for all. */
  private readonly unknownUntil = new Map<string, number>();
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly outage: OutageLog;

  constructor(
    private readonly find: (hash: string) => Promise<KeyRow | undefined>,
    logger: Logger,
  ) {
    this.outage = outageLog(logger, {
      failing: 'key lookups in the database are failing; keys this instance has not seen are refused until it answers',
      recovered: 'key lookups in the database answer again',
    });
  }

  /** The row for `hash` from the store, or undefined when it has none or could not say. */
  lookUp(hash: string): Promise<KeyRow | undefined> | undefined {
    const shared = this.pending.get(hash);
    if (shared !== undefined) return shared;
    const until = this.unknownUntil.get(hash);
    if (until !== undefined) {
      if (Date.now() < until) return undefined;
      this.unknownUntil.delete(hash);
    }
    if (this.pending.size >= PENDING_LOOKUPS) return undefined;
    const lookup = this.run(hash).finally(() => this.pending.delete(hash));
    this.pending.set(hash, lookup);
    return lookup;
  }

  /** A key with this hash is now known (created, or read by a refresh): never refuse it as unknown. */
  forget(hash: string): void {
    this.unknownUntil.delete(hash);
  }

  private async run(hash: string): Promise<KeyRow | undefined> {
    const deadline = Date.now() + LOOKUP_DEADLINE_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), LOOKUP_DEADLINE_MS);
    });
    const answer = this.whenFree(() => (Date.now() < deadline ? this.find(hash) : Promise.reject(new Error('no lookup slot before the deadline'))));
    try {
      const row = await Promise.race([answer, late]);
      if (row === 'late') {
        // The store may still answer; a key it finds is of no use to this request any more.
        answer.catch(() => undefined);
        this.outage.failed(new Error(`the key store did not answer within ${LOOKUP_DEADLINE_MS} ms`));
        return undefined;
      }
      this.outage.recovered();
      if (row === undefined) this.rememberUnknown(hash);
      return row;
    } catch (error) {
      this.outage.failed(error as Error);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `task` once fewer than CONCURRENT_LOOKUPS others run. */
  private async whenFree<T>(task: () => Promise<T>): Promise<T> {
    // A finished lookup hands its slot to the next waiting one, so none can be taken in between.
    if (this.running < CONCURRENT_LOOKUPS) this.running += 1;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next();
      else this.running -= 1;
    }
  }

  private rememberUnknown(hash: string): void {
    const now = Date.now();
    for (const [oldest, until] of this.unknownUntil) {
      if (until > now && this.unknownUntil.size < UNKNOWN_KEYS_REMEMBERED) break;
      this.unknownUntil.delete(oldest);
    }
    this.unknownUntil.delete(hash);
    this.unknownUntil.set(hash, now + UNKNOWN_KEY_TTL_MS);
  }
}
