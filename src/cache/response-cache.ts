import { redactValue } from '../redaction/index.js';
import type { TokenUsage } from '../model-api/index.js';
import { cacheKeyOf, ineligibility, type KeyParts, type RequestTraits } from './cache-key.js';
import type { CacheStore } from './cache-store.js';
import { namespaceOf, policyFor, projectNamespace, type CacheCaller, type CachePolicy } from './policy.js';
import { recordedStream, replayedStream } from './stream-replay.js';
import { encodeVector, nearest, type Embedder, type SemanticParts } from './semantic.js';
import type { EventStream } from '../model-api/index.js';

/** What the caller's request headers ask of the cache (parsed by the HTTP layer). */
export interface CacheControls {
  /** `bypass` / `no-store`: neither read nor kept; `refresh` / `no-cache`: answered anew and kept; default: read and keep. */
  use: 'default' | 'bypass' | 'refresh';
  /** A shorter time to keep this answer than the policy's (x-modelgate-cache-ttl). */
  ttlSeconds?: number | undefined;
}

/** A request as the cache sees it. */
export interface CacheQuery extends KeyParts {
  caller: CacheCaller;
  traits: RequestTraits;
  controls: CacheControls;
  /** The gateway's id of this request: a hit's record names the request whose answer it got. */
  requestId: string;
  /** The last user turn and the rest of the request, for a semantic policy (read only then); null: nothing to embed. */
  semantic?: (() => SemanticParts | null) | undefined;
  /** Embeds the last user turn for a semantic policy, as a call of the request (its caller's key pays). */
  embed?: Embedder | undefined;
}

export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** One kept answer, as stored (JSON). */
interface StoredEntry {
  v: 1;
  /** The request whose answer this is. */
  requestId: string;
  createdAt: number;
  /** A provider result (JSON answers), its Buffer members as base64 in `buffers`. */
  result?: Record<string, unknown>;
  buffers?: Record<string, string>;
  /** A stream's events, in the batches they came in. */
  batches?: unknown[][];
  /** What the answer cost when it was made, integer micro-USD; null when it could not be priced. */
  costMicroUsd: number | null;
  usage: TokenUsage | null;
}

/** A hit: the answer kept for an earlier request. */
export interface CachedAnswer {
  sourceRequestId: string;
  /** The cost the provider call would have had (the earlier request's), micro-USD; null when unpriced. */
  savedMicroUsd: number | null;
  usage: TokenUsage | null;
  /** The provider result as the earlier request's provider call returned it (a stream: replayed). */
  result: unknown;
}

/** What a provider call's answer is kept with. */
export interface KeptAnswer {
  costMicroUsd: number | null;
  usage: TokenUsage | null;
}

/**
 * A request's use of the cache: whether it was a hit (and the answer), a miss (whose answer
 * is to be kept once the provider made it), or bypassed. Made once per request by
 * `ResponseCache.ticket`; the call path reads and fills it.
 */
export interface CacheTicket {
  readonly status: CacheStatus;
  readonly policy: string;
  /** Why a request the policy applies to was not served from the cache (bypass). */
  readonly reason: string | null;
  readonly hit: CachedAnswer | null;
  /** A semantic hit: how similar (cosine) the last user turn was to the one of the answer it got; null for an exact hit. */
  readonly similarity: number | null;
  /**
   * A miss: the provider's result as the caller gets it, kept once it is whole — a JSON result
   * at once, a stream when it ended complete (the stream returned is the one to read).
   * `measured` is read then, for the cost the answer had. Anything else: the result as it is.
   */
  keep<R>(result: R, measured: () => KeptAnswer, complete: () => boolean): R;
}

/** Told what the cache did, for the metrics and the process log. */
export interface CacheObserver {
  looked(policy: string, surface: string, status: CacheStatus): void;
  kept(policy: string, bytes: number): void;
  evicted(policy: string, entries: number): void;
  /** The store failed (the request went on as a miss, or its answer was not kept). */
  failed(error: unknown): void;
}

export interface ResponseCacheSettings {
  policies: readonly CachePolicy[];
  /** The request log's retention in days (0: for ever): no answer is kept longer than the log keeps payloads. */
  retentionDays: number;
}

const SECOND_MS = 1000;
const DAY_SECONDS = 86_400;

function isStream(value: unknown): value is EventStream<{ type: string }> {
  return typeof value === 'object' && value !== null && typeof (value as { read?: unknown }).read === 'function' && typeof (value as { resume?: unknown }).resume === 'function';
}

/** A result's Buffer members (an embedding response's bytes) apart, as base64; the rest as it is. */
function splitBuffers(result: Record<string, unknown>): { result: Record<string, unknown>; buffers?: Record<string, string> } {
  let buffers: Record<string, string> | undefined;
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(result)) {
    if (Buffer.isBuffer(value)) (buffers ??= {})[name] = value.toString('base64');
    else rest[name] = value;
  }
  return buffers === undefined ? { result: rest } : { result: rest, buffers };
}

function joinBuffers(entry: StoredEntry): Record<string, unknown> {
  const result = { ...entry.result };
  for (const [name, base64] of Object.entries(entry.buffers ?? {})) result[name] = Buffer.from(base64, 'base64');
  return result;
}

/** A semantic lookup: the prefix key and the turn's vector (kept with the answer on a miss), and the answer it found. */
interface SemanticLookup {
  prefix: string;
  vector: string;
  hit: CachedAnswer | null;
  similarity: number | null;
}

/** A ticket answered from the cache. */
function hitOf(policy: CachePolicy, hit: CachedAnswer, similarity: number | null): CacheTicket {
  return { status: 'hit', policy: policy.name, reason: null, hit, similarity, keep: (result) => result };
}

/** A ticket that leaves the cache out. */
function bypassed(policy: string, reason: string): CacheTicket {
  return { status: 'bypass', policy, reason, hit: null, similarity: null, keep: (result) => result };
}

/**
 * Response caching (docs/caching.md): the answer to a request kept under the normalised
 * request's key within its namespace (the project's or the key's), for the policy's TTL, in
 * this process or in Redis; a later equal request in the namespace gets it without a provider
 * call. Built once at start-up; the model-call path asks it once per cacheable request.
 */
export class ResponseCache {
  constructor(
    private readonly settings: ResponseCacheSettings,
    private readonly store: CacheStore,
    private readonly observer: CacheObserver,
  ) {}

  /** Where the answers are kept (`memory` or `redis`). */
  get storeKind(): CacheStore['kind'] {
    return this.store.kind;
  }

  /** Bytes of answers this process holds (null for a shared store). */
  heldBytes(): number | null {
    return this.store.heldBytes();
  }

  /** Whether any policy could apply to a request for this model (no policy: no lookup, no header). */
  private policyOf(caller: CacheCaller, model: string): CachePolicy | undefined {
    return this.settings.policies.length === 0 ? undefined : policyFor(this.settings.policies, caller, model);
  }

  /** The request's ticket; null when no policy applies to it. A store that fails makes it a miss whose answer is not kept. */
  async ticket(query: CacheQuery): Promise<CacheTicket | null> {
    const policy = this.policyOf(query.caller, query.model);
    if (policy === undefined) return null;
    const ticket = await this.ticketOf(policy, query);
    this.observer.looked(policy.name, query.surface, ticket.status);
    return ticket;
  }

  private async ticketOf(policy: CachePolicy, query: CacheQuery): Promise<CacheTicket> {
    if (query.controls.use === 'bypass') return bypassed(policy.name, 'requested');
    const reason = ineligibility(policy, query.traits);
    if (reason !== null) return bypassed(policy.name, reason);
    const namespace = namespaceOf(policy, query.caller);
    const key = cacheKeyOf(query);
    if (query.controls.use !== 'refresh') {
      let text: string | null;
      try {
        text = await this.store.get(namespace, key);
      } catch (error) {
        this.observer.failed(error);
        return bypassed(policy.name, 'store_unavailable');
      }
      const hit = text === null ? null : this.answerOf(text);
      if (hit !== null) return hitOf(policy, hit, null);
    }
    const ttlMs = this.ttlSecondsOf(policy, query.controls) * SECOND_MS;
    const similar = await this.similar(policy, namespace, key, query, ttlMs);
    if (similar?.hit != null) return hitOf(policy, similar.hit, similar.similarity);
    const keep = (entry: StoredEntry) => this.put(policy, namespace, key, entry, ttlMs, similar);
    return {
      status: 'miss',
      policy: policy.name,
      reason: null,
      hit: null,
      similarity: null,
      keep: <R>(result: R, measured: () => KeptAnswer, complete: () => boolean): R => {
        const base = { v: 1 as const, requestId: query.requestId, createdAt: Date.now() };
        if (isStream(result)) {
          return recordedStream(result, policy.maxEntryBytes, complete, (batches) => {
            if (batches !== null) keep({ ...base, batches, ...measured() });
          }) as R;
        }
        if (typeof result === 'object' && result !== null && complete()) keep({ ...base, ...splitBuffers(result as Record<string, unknown>), ...measured() });
        return result;
      },
    };
  }

  /**
   * A semantic policy's lookup after an exact miss: the last user turn embedded (the caller's
   * call), and the nearest kept turn under the same prefix (the rest of the request equal)
   * above the threshold. Null when the policy is exact or the request has no user turn to
   * embed; a failed embedding or store leaves the request a miss whose vector is not kept.
   */
  private async similar(policy: CachePolicy, namespace: string, key: string, query: CacheQuery, ttlMs: number): Promise<SemanticLookup | null> {
    const settings = policy.semantic;
    if (policy.mode !== 'semantic' || settings === undefined || query.embed === undefined) return null;
    const parts = query.semantic?.() ?? null;
    if (parts === null) return null;
    try {
      const vector = encodeVector(await query.embed(settings.embeddingModel, parts.text));
      const prefix = cacheKeyOf({ ...query, surface: `${query.surface}:prefix`, body: parts.rest });
      const lookup: SemanticLookup = { prefix, vector, hit: null, similarity: null };
      if (query.controls.use === 'refresh') return lookup;
      const found = await nearest(await this.store.vectors(namespace, prefix), vector, settings.threshold);
      if (found === null || found.key === key) return lookup;
      const text = await this.store.get(namespace, found.key);
      const hit = text === null ? null : this.answerOf(text);
      if (hit === null) return lookup;
      // Its vector moves last in the namespace's use order, as the answer's entry did.
      this.store.addVector(namespace, prefix, { key: found.key, vector: found.vector }, ttlMs, policy.maxEntries).catch((error: unknown) => this.observer.failed(error));
      return { ...lookup, hit, similarity: found.similarity };
    } catch (error) {
      this.observer.failed(error);
      return null;
    }
  }

  /** The shortest of the policy's TTL, the caller's, and the log's retention. */
  private ttlSecondsOf(policy: CachePolicy, controls: CacheControls): number {
    let ttl = policy.ttlSeconds;
    if (controls.ttlSeconds !== undefined && controls.ttlSeconds > 0) ttl = Math.min(ttl, controls.ttlSeconds);
    if (this.settings.retentionDays > 0) ttl = Math.min(ttl, this.settings.retentionDays * DAY_SECONDS);
    return ttl;
  }

  private answerOf(text: string): CachedAnswer | null {
    let entry: StoredEntry;
    try {
      entry = JSON.parse(text) as StoredEntry;
    } catch {
      return null;
    }
    if (entry.v !== 1) return null;
    const result = entry.batches !== undefined ? replayedStream(entry.batches) : joinBuffers(entry);
    return { sourceRequestId: entry.requestId, savedMicroUsd: entry.costMicroUsd, usage: entry.usage, result };
  }

  /**
   * Keeps an entry, in the background (the caller's answer never waits for it). Not kept: an
   * answer larger than the policy allows, and one holding what the log would redact (a
   * secret): the cache keeps nothing the log would not.
   */
  private put(policy: CachePolicy, namespace: string, key: string, entry: StoredEntry, ttlMs: number, semantic: SemanticLookup | null): void {
    const kept = entry.result ?? entry.batches;
    if (redactValue(kept) !== kept) return;
    const text = JSON.stringify(entry);
    if (text.length > policy.maxEntryBytes) return;
    this.store.set(namespace, key, text, ttlMs, policy).then(
      (evicted) => {
        this.observer.kept(policy.name, text.length);
        if (evicted > 0) this.observer.evicted(policy.name, evicted);
      },
      (error: unknown) => this.observer.failed(error),
    );
    // Sent right after the entry (one connection keeps the order): a vector never names an entry not yet written.
    if (semantic !== null) this.store.addVector(namespace, semantic.prefix, { key, vector: semantic.vector }, ttlMs, policy.maxEntries).catch((error: unknown) => this.observer.failed(error));
  }

  /** Removes the answers of one project (its keys' own namespaces too), or every answer; resolves with how many. */
  clear(projectId?: string): Promise<number> {
    return this.store.clear(projectId === undefined ? undefined : projectNamespace(projectId));
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
