import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { endUserOf } from '../src/budgets/index.js';
import { GatewayError } from '../src/errors/index.js';
import type { Principal } from '../src/keys/index.js';
import { describeReset, InMemoryLimiter, periodAt, type BudgetHold } from '../src/limits/index.js';

const KEY: Principal = {
  kind: 'key',
  keyId: 'key_0000000000000001',
  projectId: 'default',
  fingerprint: 'key_0000000000000001…abcd',
  scopes: new Set(['model:request']),
  limits: { rpm: null, dailyTokens: null, monthlyCostUsd: null },
  allowedModels: null,
};

function hold(level: BudgetHold['level'], tokens: number | null, at: number, period: 'day' | 'week' | 'month' | 'total' = 'day', timeZone = 'UTC', costMicroUsd: number | null = null): BudgetHold {
  const span = periodAt(period, timeZone, at);
  return { budgetId: `bud_${level}`, level, name: level, tokens, costMicroUsd, periodId: span.id, resetsAt: span.end, resetText: describeReset(span.end, timeZone) };
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof GatewayError);
    return error;
  }
  assert.fail('admitted');
}

describe('budget periods', () => {
  test('a day, week and month begin at local midnight of the budget\'s time zone; total never ends', () => {
    const at = Date.parse('2026-12-02T23:30:00Z'); // Wednesday; already Thursday in Berlin
    assert.deepEqual(periodAt('day', 'UTC', at), { id: '2026-12-02', start: Date.parse('2026-12-02T00:00:00Z'), end: Date.parse('2026-12-03T00:00:00Z') });
    assert.deepEqual(periodAt('day', 'Europe/Berlin', at), { id: '2026-12-03', start: Date.parse('2026-12-02T23:00:00Z'), end: Date.parse('2026-12-03T23:00:00Z') });
    assert.deepEqual(periodAt('week', 'UTC', at), { id: 'W2026-11-30', start: Date.parse('2026-11-30T00:00:00Z'), end: Date.parse('2026-12-07T00:00:00Z') });
    assert.deepEqual(periodAt('month', 'America/New_York', at), { id: '2026-12', start: Date.parse('2026-12-01T05:00:00Z'), end: Date.parse('2027-01-01T05:00:00Z') });
    assert.deepEqual(periodAt('total', 'UTC', at), { id: 'total', start: 0, end: null });
    assert.equal(describeReset(Date.parse('2026-12-03T23:00:00Z'), 'Europe/Berlin'), '2026-12-04 00:00 Europe/Berlin');
  });

  test('a month across a daylight-saving change ends at local midnight', () => {
    const march = periodAt('month', 'Europe/Berlin', Date.parse('2026-03-15T12:00:00Z'));
    assert.equal(march.start, Date.parse('2026-02-28T23:00:00Z'));
    assert.equal(march.end, Date.parse('2026-03-31T22:00:00Z'));
  });
});

describe('budgets in the in-process limiter', () => {
  test('a budget admits while it has room, refuses naming its level and reset, and starts over when the period rolls over (a set clock)', async () => {
    let now = Date.parse('2026-12-02T10:00:00Z');
    const limiter = new InMemoryLimiter(() => now);
    const admission = await limiter.admit(KEY, { tokens: 80, costUsd: null }, [hold('project', 100, now)]);
    await admission.settle({ tokens: 100, costUsd: null });
    const error = await refusal(limiter.admit(KEY, { tokens: 10, costUsd: null }, [hold('project', 100, now)]));
    assert.equal(error.code, 'budget_exceeded');
    assert.equal(error.status, 429);
    assert.match(error.message, /project "project"/);
    assert.match(error.message, /resets at 2026-12-03 00:00 UTC/);
    assert.equal(error.retryAfterSeconds, 14 * 3600);

    now = Date.parse('2026-12-03T00:00:01Z');
    const next = await limiter.admit(KEY, { tokens: 10, costUsd: null }, [hold('project', 100, now)]);
    assert.equal(next.reserved.tokens, 10);
  });

  test('one reservation across the levels, clamped to the smallest remainder, added to every level', async () => {
    const now = Date.parse('2026-12-02T10:00:00Z');
    const limiter = new InMemoryLimiter(() => now);
    const holds = () => [hold('key', 1000, now), hold('team', 50, now, 'month'), hold('end_user', 500, now, 'total')];
    const first = await limiter.admit(KEY, { tokens: 40, costUsd: null }, holds());
    assert.equal(first.reserved.tokens, 40);
    const second = await limiter.admit(KEY, { tokens: 40, costUsd: null }, holds());
    assert.equal(second.reserved.tokens, 10, 'clamped to what the team has left');
    assert.deepEqual(await limiter.budgetUsage(holds()), [
      { tokens: 50, costMicroUsd: 0 },
      { tokens: 50, costMicroUsd: 0 },
      { tokens: 50, costMicroUsd: 0 },
    ]);
    const error = await refusal(limiter.admit(KEY, { tokens: 1, costUsd: null }, holds()));
    assert.match(error.message, /team "team"/);
    // Settled with what was used: the team has room again.
    await first.settle({ tokens: 20, costUsd: null });
    assert.equal((await limiter.admit(KEY, { tokens: 40, costUsd: null }, holds())).reserved.tokens, 20);
  });

  test('a USD budget counts cost; a total budget never resets', async () => {
    let now = Date.parse('2026-12-02T10:00:00Z');
    const limiter = new InMemoryLimiter(() => now);
    const usd = () => hold('end_user', null, now, 'total', 'UTC', 1_000_000);
    const admission = await limiter.admit(KEY, { tokens: 10, costUsd: 2 }, [usd()]);
    assert.equal(admission.reserved.costUsd, 1, 'clamped to the $1 left');
    now += 400 * 86_400_000;
    const error = await refusal(limiter.admit(KEY, { tokens: 1, costUsd: 0.01 }, [usd()]));
    assert.match(error.message, /end user "end_user" \(\$1\)/);
    assert.match(error.message, /does not reset/);
    assert.equal(error.retryAfterSeconds, undefined);
  });

  test('seeds from the request log start counters that are not counting yet, and leave counting ones alone', async () => {
    const now = Date.parse('2026-12-02T10:00:00Z');
    const limiter = new InMemoryLimiter(() => now);
    const team = hold('team', 100, now);
    await limiter.seedBudgets([{ budgetId: team.budgetId, periodId: team.periodId, resetsAt: team.resetsAt, tokens: 70, costMicroUsd: 0 }]);
    await limiter.admit(KEY, { tokens: 10, costUsd: null }, [team]);
    await limiter.seedBudgets([{ budgetId: team.budgetId, periodId: team.periodId, resetsAt: team.resetsAt, tokens: 70, costMicroUsd: 0 }]);
    assert.deepEqual(await limiter.budgetUsage([team]), [{ tokens: 80, costMicroUsd: 0 }]);
  });
});

describe('the end user of a request', () => {
  test('the header first, then Responses safety_identifier, OpenAI user, Anthropic metadata.user_id', () => {
    assert.equal(endUserOf('student-7', { user: 'other' }), 'student-7');
    assert.equal(endUserOf(undefined, { safety_identifier: 'sid', user: 'u' }), 'sid');
    assert.equal(endUserOf(undefined, { user: 'u-1' }), 'u-1');
    assert.equal(endUserOf(undefined, { metadata: { user_id: 'anthropic-user' } }), 'anthropic-user');
    assert.equal(endUserOf(undefined, { contents: [] }), null);
    assert.equal(endUserOf(['first', 'second'], null), 'first');
    assert.equal(endUserOf('  ', { user: 42 }), null);
  });
});
