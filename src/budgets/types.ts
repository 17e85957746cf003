import type { BudgetLevel, BudgetPeriod } from '../limits/index.js';

export type { BudgetLevel, BudgetPeriod };

export const BUDGET_LEVELS: readonly BudgetLevel[] = ['team', 'project', 'key', 'end_user'];
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month', 'total'];
/** Alert thresholds when a budget names none: percent of its USD or token amount. */
export const DEFAULT_THRESHOLDS: readonly number[] = [50, 80, 100];

/**
 * A budget (decisions §15): USD and/or tokens per period on a team, a project, a key or an end
 * user. A request is admitted only while every budget above it has room (docs/limits.md#budgets).
 */
export interface Budget {
  id: string;
  level: BudgetLevel;
  /** The team, project or key id, or the end user's id as requests name it. */
  target: string;
  usd: number | null;
  tokens: number | null;
  period: BudgetPeriod;
  /** IANA time zone the period's days, weeks and months begin in. */
  resetTz: string;
  /** Percentages of the budget at which an alert is sent, once per period each. */
  thresholds: readonly number[];
  createdAt: number;
  updatedAt: number;
}

/** A budget as the admin API shows it. */
export interface BudgetView {
  id: string;
  level: BudgetLevel;
  target: string;
  usd: number | null;
  tokens: number | null;
  period: BudgetPeriod;
  reset_tz: string;
  thresholds: number[];
  created_at: string;
  updated_at: string;
}

export function toBudgetView(budget: Budget): BudgetView {
  return {
    id: budget.id,
    level: budget.level,
    target: budget.target,
    usd: budget.usd,
    tokens: budget.tokens,
    period: budget.period,
    reset_tz: budget.resetTz,
    thresholds: [...budget.thresholds],
    created_at: new Date(budget.createdAt).toISOString(),
    updated_at: new Date(budget.updatedAt).toISOString(),
  };
}
