import type { Principal } from '../keys/index.js';
import { heldTo } from './limited-principal.js';
import type { Admission, Limiter, UsageEstimate } from './types.js';

/** Reserves against a key's caps for one model call of a request that makes several. */
export interface CallMeter {
  /** Reserves the call's estimate (a 429 when it does not fit); settle the admission with what the call used. */
  reserve(estimate: UsageEstimate): Promise<Admission>;
}

/**
 * The meter of a request whose model calls are only known as it runs (an agent run): each
 * call reserves its own estimate against the key's daily token and monthly cost caps before
 * it is made, as a chat request does, so neither a long run nor concurrent runs overshoot a
 * cap. The request itself was counted once against the per-minute limit when it was
 * admitted; its calls are not counted again.
 */
export function callMeter(limiter: Limiter, principal: Principal): CallMeter {
  const capsOnly = heldTo(principal, 'caps');
  return { reserve: (estimate) => limiter.admit(capsOnly, estimate) };
}
