import { microToUsd, type ActualUsage, type UsageEstimate } from '../limits/index.js';
import type { TokenUsage } from '../model-api/index.js';

/**
 * What a call's reservation is settled with: the usage and cost it reported, or — when the
 * provider did work that was not measured (an answer without usage, a call cut off by the
 * client or a deadline) — what was reserved, which then stays counted. A call that did no
 * work gives its reservation back.
 */
export function settlementOf(reserved: UsageEstimate, measured: { usage: TokenUsage | null; costMicroUsd: number | null }, workDone: boolean): ActualUsage {
  const unmeasuredWork = measured.usage === null && workDone;
  return {
    tokens: measured.usage?.totalTokens ?? (unmeasuredWork ? reserved.tokens : 0),
    costUsd: measured.costMicroUsd !== null ? microToUsd(measured.costMicroUsd) : unmeasuredWork ? reserved.costUsd : null,
  };
}
