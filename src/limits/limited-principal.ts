import type { Principal } from '../keys/index.js';

/**
 * The principal held to one part of its key's limits: `per-minute` for a call that uses no
 * tokens and costs nothing (an encryption utility: a key over its caps still encrypts), `caps`
 * for a model call of a request already counted against the per-minute limit (an agent run's).
 */
export function heldTo(principal: Principal, part: 'per-minute' | 'caps'): Principal {
  if (principal.kind !== 'key') return principal;
  const { rpm, dailyTokens, monthlyCostUsd } = principal.limits;
  const limits = part === 'per-minute' ? { rpm, dailyTokens: null, monthlyCostUsd: null } : { rpm: null, dailyTokens, monthlyCostUsd };
  return { ...principal, limits };
}
