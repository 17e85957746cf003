import type { UsageEstimate } from '../../src/limits/index.js';
import type { TestGateway } from './gateway.js';

/** Records the estimates the gateway reserves, in order, so a test can compute what fits. */
export function spyOnEstimates(gateway: TestGateway): UsageEstimate[] {
  const estimates: UsageEstimate[] = [];
  const limits = gateway.gateway.context.limits;
  const admit = limits.admit.bind(limits);
  limits.admit = (principal, estimate, budgets) => {
    estimates.push(estimate);
    return admit(principal, estimate, budgets);
  };
  return estimates;
}
