import { GatewayError } from '../errors/index.js';
import { microToUsd } from './micro-usd.js';
import type { BudgetHold } from './types.js';
import { rateLimitHeaders } from './windows.js';

/** The three 429s, shared by every limiter so callers see one wording. */
export function requestsPerMinuteExceeded(rpm: number, resetSeconds: number): GatewayError {
  return new GatewayError('rate_limit_exceeded', `This key allows ${rpm} requests per minute; retry in ${resetSeconds}s.`, {
    retryAfterSeconds: resetSeconds,
    headers: rateLimitHeaders(rpm, 0, resetSeconds),
  });
}

export function dailyTokenCapExceeded(cap: number, resetSeconds: number, headers: Record<string, string>): GatewayError {
  return new GatewayError(
    'daily_token_cap_exceeded',
    `This key's daily cap of ${cap} tokens is used up: spent, or reserved by its requests in progress (it resets at 00:00 UTC). Wait for requests in progress to finish, or for the reset.`,
    { retryAfterSeconds: resetSeconds, headers },
  );
}

export function monthlyCostCapExceeded(capUsd: number, resetSeconds: number, headers: Record<string, string>): GatewayError {
  return new GatewayError(
    'monthly_cost_cap_exceeded',
    `This key's monthly cost cap of $${capUsd} is used up: spent, or reserved by its requests in progress (it resets on the 1st, 00:00 UTC). Ask an administrator to raise it, or wait.`,
    { retryAfterSeconds: resetSeconds, headers },
  );
}

const LEVEL_NAMES: Readonly<Record<BudgetHold['level'], string>> = { team: 'team', project: 'project', key: 'key', end_user: 'end user' };

/** A budget above the request (its team, project, key or end user) has nothing left: names the level and when it resets. */
export function budgetExceeded(hold: BudgetHold, what: 'tokens' | 'cost', now: number, headers: Record<string, string> = {}): GatewayError {
  const amount = what === 'tokens' ? `${hold.tokens} tokens` : `$${microToUsd(hold.costMicroUsd ?? 0)}`;
  const resets = hold.resetsAt === null ? 'It does not reset (a total budget); ask an administrator to raise it.' : `It resets at ${hold.resetText}.`;
  return new GatewayError(
    'budget_exceeded',
    `The budget of the ${LEVEL_NAMES[hold.level]} "${hold.name}" (${amount}) is used up: spent, or reserved by requests in progress. ${resets}`,
    {
      ...(hold.resetsAt === null ? {} : { retryAfterSeconds: Math.max(1, Math.ceil((hold.resetsAt - now) / 1000)) }),
      headers,
      logDetail: { budget: hold.budgetId, level: hold.level },
    },
  );
}
