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

/** The levels a budget can be set on (decisions §15). */
export type BudgetLevel = 'team' | 'project' | 'key' | 'end_user';

/**
 * One budget a request is held to, in the period it falls in: its counters are
 * `<budget id>` tokens and micro-USD per period id, shared by every request under it.
 */
export interface BudgetHold {
  budgetId: string;
  level: BudgetLevel;
  /** What the refusal calls it: the team's, project's or key's name, the end user's id. */
  name: string;
  tokens: number | null;
  costMicroUsd: number | null;
  /** The period id the counters are kept under (`2026-12`, `total`, …). */
  periodId: string;
  /** Epoch ms when the period ends; null for `total`. */
  resetsAt: number | null;
  /** The refusal's wording of the reset (in the budget's time zone). */
  resetText: string;
}

/** What a budget has spent in one period, read from the request log (limiter seeds). */
export interface BudgetSeed {
  budgetId: string;
  periodId: string;
  resetsAt: number | null;
  tokens: number;
  costMicroUsd: number;
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
  /**
   * `budgets` are the budgets above the request (its key, project, team, end user): one
   * reservation, clamped to the smallest remainder of every cap and budget, is added to each.
   */
  admit(principal: Principal, estimate: UsageEstimate, budgets?: readonly BudgetHold[]): Promise<Admission>;
  /** Spend already made in budgets' current periods (from the request log): counters that do not exist yet start from it. */
  seedBudgets(seeds: readonly BudgetSeed[]): Promise<void>;
  /** What each budget has spent and reserved in its period, as this limiter counts it (alerts, the admin API). */
  budgetUsage(holds: readonly BudgetHold[]): Promise<{ tokens: number; costMicroUsd: number }[]>;
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
