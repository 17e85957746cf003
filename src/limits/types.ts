import type { Principal } from '../keys/index.js';

/** What a request is expected to use, reserved before the provider is called. */
export interface UsageEstimate {
  tokens: number;
  /** null when the model has no pricing (it then counts nothing against the cost cap). */
  costUsd: number | null;
}

export interface ActualUsage {
  tokens: number;
  costUsd: number | null;
}

/** An admitted request's hold on its key's caps; settled once with what it really used. */
export interface Admission {
  /** OpenAI-style x-ratelimit-* headers for the response (empty without an rpm limit). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * What was reserved: the estimate, each amount clamped to what remained of its cap. The
   * request log settles with it when the real usage is unknown.
   */
  readonly reserved: UsageEstimate;
  /** Replaces the reservation with the real usage. Idempotent: only the first call counts. */
  settle(actual: ActualUsage): Promise<void>;
}

/** How a limiter is enforcing right now, for metrics and the docs' outage behaviour. */
export interface LimiterState {
  backend: 'memory' | 'redis';
  /** True while Redis is unreachable and this instance enforces with its own counters. */
  fallbackActive: boolean;
  /** Admissions decided by the in-process fallback since start. */
  fallbackAdmissions: number;
  /** What a Redis outage does (limits.redisOutage): per-instance counters, or refusals (absent: in-process counters, no outage to speak of). */
  outageMode?: 'local' | 'failClosed';
  /**
   * Instances sharing the Redis counters, this one included: as last announced through Redis,
   * or during an outage the count its share is taken from (absent: in-process counters).
   */
  instancesSeen?: number;
}

/** Usage already spent in the current windows, read from the request log at start-up. */
export interface LimitSeed {
  keyId: string;
  /** Tokens of the current UTC day. */
  dayTokens: number;
  /** Cost of the current UTC month, integer micro-USD. */
  monthCostMicroUsd: number;
}

/** Reads the seeds for the windows that contain `now`. */
export type LimitSeedSource = (now: number) => Promise<LimitSeed[]>;

/**
 * Per-key limits: requests per minute, daily tokens (UTC day), monthly cost (UTC month).
 * `admit` checks and reserves in one atomic step: a cap admits while some of it is neither
 * spent nor reserved, and the request reserves its estimate clamped to that remainder, so
 * concurrent requests share what is left and never all get in on a nearly spent cap. It
 * throws the 429 GatewayError when the per-minute limit is reached or a cap has nothing left.
 */
export interface Limiter {
  admit(principal: Principal, estimate: UsageEstimate): Promise<Admission>;
  /**
   * The x-ratelimit-* headers of a keyed request refused before admission (empty without a
   * per-minute limit): the count this instance last saw, without asking a shared counter.
   */
  lastSeenHeaders(principal: Principal): Readonly<Record<string, string>>;
  state(): LimiterState;
  /**
   * Whether the shared counters answer a round trip now (Redis: a PING within
   * limits.redisCommandTimeoutMs); null when the counters live in this process.
   */
  sharedCountersAnswer(): Promise<boolean | null>;
  close(): Promise<void>;
}
