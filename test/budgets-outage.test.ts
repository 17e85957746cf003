import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { GatewayError } from '../src/errors/index.js';
import type { Principal } from '../src/keys/index.js';
import { createLimiter, describeReset, periodAt, type BudgetHold } from '../src/limits/index.js';

/** Budgets while Redis cannot be reached: the instance enforces them with its own counters, seeded from the request log. */

const KEY: Principal = {
  kind: 'key',
  keyId: 'key_00000000000000aa',
  projectId: 'default',
  fingerprint: 'key_00000000000000aa…abcd',
  scopes: new Set(['model:request']),
  limits: { rpm: null, dailyTokens: null, monthlyCostUsd: null },
  allowedModels: null,
};

test('an unreachable Redis at start: a budget is enforced by the fallback from its seed, and refused once spent', async () => {
  // Nothing listens on port 1: the limiter starts in its fallback.
  const limiter = await createLimiter({ redisUrl: 'redis://127.0.0.1:1', redisKeyPrefix: 'mg-test-outage:', redisCommandTimeoutMs: 200 }, async () => [], pino({ level: 'silent' }));
  try {
    const now = Date.now();
    const span = periodAt('month', 'UTC', now);
    const budget: BudgetHold = { budgetId: 'bud_outage', level: 'team', name: 'default', tokens: 100, costMicroUsd: null, periodId: span.id, resetsAt: span.end, resetText: describeReset(span.end, 'UTC') };
    await limiter.seedBudgets([{ budgetId: budget.budgetId, periodId: span.id, resetsAt: span.end, tokens: 90, costMicroUsd: 0 }]);
    const admission = await limiter.admit(KEY, { tokens: 50, costUsd: null }, [budget]);
    assert.equal(admission.reserved.tokens, 10, 'clamped to what the seed left');
    assert.equal(limiter.state().fallbackActive, true);
    await assert.rejects(limiter.admit(KEY, { tokens: 1, costUsd: null }, [budget]), (error) => error instanceof GatewayError && error.code === 'budget_exceeded');
  } finally {
    await limiter.close();
  }
});
