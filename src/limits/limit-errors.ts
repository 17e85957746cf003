import { GatewayError } from '../errors/index.js';
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
