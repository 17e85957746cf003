export type { Admission, Limiter, UsageEstimate, ActualUsage } from './types.js';
export { InMemoryLimiter } from './in-memory-limiter.js';
export { rateLimitHeaders } from './windows.js';
