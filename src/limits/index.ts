export type { Admission, Limiter, LimiterState, LimitSeed, LimitSeedSource, UsageEstimate, ActualUsage, BudgetHold, BudgetLevel, BudgetSeed } from './types.js';
export { periodAt, describeReset, isTimeZone } from './periods.js';
export type { BudgetPeriod, PeriodSpan } from './periods.js';
export { InMemoryLimiter } from './in-memory-limiter.js';
// RedisLimiter is not re-exported: it loads ioredis, which only a Redis configuration needs (create-limiter imports it then).
export { FailoverLimiter } from './failover-limiter.js';
export { createLimiter } from './create-limiter.js';
export type { LimiterSettings } from './create-limiter.js';
export { rateLimitHeaders, dayWindow, monthWindow } from './windows.js';
export { usdToMicro, microToUsd, MICRO_PER_USD } from './micro-usd.js';
export { ASSUMED_REPLY_TOKENS, estimateTokens, estimateImages } from './estimate.js';
export { heldTo } from './limited-principal.js';
