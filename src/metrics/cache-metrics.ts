import { Counter, Gauge, type Registry } from './registry.js';

/**
 * The metrics of the response cache (docs/caching.md): lookups by policy, surface and outcome
 * (hit, miss, bypass), evictions, bytes of answers kept, store failures, and the bytes this
 * process holds (in-process store only). Labels are bounded: policies come from the
 * configuration, surfaces from the gateway's own APIs.
 */
export class CacheMetrics {
  private readonly lookups: Counter;
  private readonly evictions: Counter;
  private readonly keptBytes: Counter;
  private readonly failures: Counter;
  private held: () => number | null = () => null;

  constructor(registry: Registry) {
    this.lookups = registry.register(
      new Counter('modelgate_cache_requests_total', 'Requests a response-cache policy applied to, by policy, surface and outcome (hit, miss, bypass).', ['policy', 'surface', 'outcome']),
    );
    this.evictions = registry.register(new Counter('modelgate_cache_evictions_total', 'Cached answers evicted (least recently used) to keep a namespace in its bounds, by policy.', ['policy']));
    this.keptBytes = registry.register(new Counter('modelgate_cache_stored_bytes_total', 'Bytes of answers written to the response cache, by policy.', ['policy']));
    this.failures = registry.register(new Counter('modelgate_cache_store_failures_total', 'Response-cache store operations that failed (the request went on without the cache).'));
    registry.register(new Gauge('modelgate_cache_bytes', 'Bytes of cached answers this process holds (in-process store; 0 with Redis).', () => this.held() ?? 0));
  }

  looked(policy: string, surface: string, outcome: string): void {
    this.lookups.inc({ policy, surface, outcome });
  }

  kept(policy: string, bytes: number): void {
    this.keptBytes.inc({ policy }, bytes);
  }

  evicted(policy: string, entries: number): void {
    this.evictions.inc({ policy }, entries);
  }

  failed(): void {
    this.failures.inc();
  }

  watchHeldBytes(read: () => number | null): void {
    this.held = read;
  }
}
