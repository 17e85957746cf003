import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminCli } from './helpers/admin-cli.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';

/** `modelgate budgets …` and `modelgate usage --by end_user` as an operator runs them against a gateway started here. */

describe('modelgate budgets', { skip: CLI_NOT_BUILT }, () => {
  let gateway: TestGateway;

  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway.close();
  });

  test('set creates, set again changes, list shows, delete removes; a bad period is refused before any request', async () => {
    const created = await adminCli(gateway, 'budgets', 'set', '--team', 'default', '--usd', '100', '--period', 'week', '--reset-tz', 'Europe/Paris', '--json');
    assert.equal(created.code, 0, created.stderr);
    const budget = JSON.parse(created.stdout);
    assert.deepEqual([budget.level, budget.target, budget.usd, budget.tokens, budget.period, budget.reset_tz], ['team', 'default', 100, null, 'week', 'Europe/Paris']);

    const changed = await adminCli(gateway, 'budgets', 'set', '--team', 'default', '--tokens', '5000', '--thresholds', '75,100');
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, new RegExp(`Changed ${budget.id}: team default, \\$100\\.00 \\+ 5000 tokens per week`));

    const listed = await adminCli(gateway, 'budgets', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /team\s+default/);
    const json = JSON.parse((await adminCli(gateway, 'budgets', 'list', '--json')).stdout);
    assert.deepEqual(json[0].thresholds, [75, 100]);

    assert.equal((await adminCli(gateway, 'budgets', 'set', '--team', 'default', '--period', 'year')).code !== 0, true);
    assert.notEqual((await adminCli(gateway, 'budgets', 'set', '--usd', '5')).code, 0, 'a level is required');

    const removed = await adminCli(gateway, 'budgets', 'delete', budget.id);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match((await adminCli(gateway, 'budgets')).stdout, /No budgets/);
    assert.match((await adminCli(gateway, 'budgets', 'alerts')).stdout, /No budget alerts yet/);
    assert.match((await adminCli(gateway, 'usage', '--by', 'end_user')).stdout, /No requests in this period|end_user/);
  });
});
