import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BudgetStore, DEFAULT_THRESHOLDS } from '../src/budgets/index.js';
import type { Storage } from '../src/storage/index.js';
import { openBackendStorage, STORAGE_BACKENDS } from './helpers/storage-backends.js';

/**
 * What a team admin's budget routes read, on both databases: the budgets of a set of teams
 * (their own, their projects', their projects' keys'; never an end user's) and the team a
 * budget's target belongs to.
 */
const NOW = Date.parse('2026-12-04T12:00:00Z');
const FIELDS = { usd: 10, tokens: null, period: 'month' as const, resetTz: 'UTC', thresholds: DEFAULT_THRESHOLDS };

for (const backend of STORAGE_BACKENDS) {
  describe(`budgets by team on ${backend.name}`, { skip: backend.skip }, () => {
    let opened: { storage: Storage; close(): Promise<void> };
    let store: BudgetStore;
    const ids: Record<string, string> = {};

    before(async () => {
      opened = await openBackendStorage(backend);
      const { db } = opened.storage;
      store = new BudgetStore(db);
      await db.insertInto('teams').values([{ id: 'red', name: 'Red', created_at: NOW }, { id: 'blue', name: 'Blue', created_at: NOW }]).execute();
      await db
        .insertInto('projects')
        .values([
          { id: 'p-red', name: 'Red project', created_at: NOW, team_id: 'red', allowed_tools: null },
          { id: 'p-blue', name: 'Blue project', created_at: NOW, team_id: 'blue', allowed_tools: null },
        ])
        .execute();
      const key = (id: string, project: string) => ({
        id, project_id: project, name: id, secret_hash: `hash-${id}`, last4: '1234', scopes: '["model:request"]', status: 'active' as const,
        rpm_limit: null, daily_token_cap: null, monthly_cost_cap_usd: null, allowed_models: null, created_at: NOW, updated_at: NOW,
      });
      await db.insertInto('api_keys').values([key('key_red', 'p-red'), key('key_blue', 'p-blue')]).execute();
      for (const [name, level, target] of [
        ['team red', 'team', 'red'],
        ['team blue', 'team', 'blue'],
        ['project red', 'project', 'p-red'],
        ['project blue', 'project', 'p-blue'],
        ['key red', 'key', 'key_red'],
        ['key blue', 'key', 'key_blue'],
        // An end user named like a team is still nobody's team.
        ['end user', 'end_user', 'red'],
      ] as const) {
        ids[name] = (await store.create(level, target, FIELDS, NOW)).id;
      }
    });
    after(async () => {
      await opened.close();
    });

    test("a team's budgets are its own, its projects' and their keys'", async () => {
      const of = async (teams: string[]) => (await store.listOfTeams(teams)).map((budget) => budget.id).sort();
      assert.deepEqual(await of(['red']), [ids['team red'], ids['project red'], ids['key red']].sort());
      assert.deepEqual(await of(['red', 'blue']), Object.entries(ids).filter(([name]) => name !== 'end user').map(([, id]) => id).sort());
      assert.deepEqual(await of(['green']), []);
      assert.deepEqual(await of([]), []);
    });

    test('the team of a team, project or key; none for an unknown one', async () => {
      assert.equal(await store.teamOf('team', 'red'), 'red');
      assert.equal(await store.teamOf('project', 'p-blue'), 'blue');
      assert.equal(await store.teamOf('key', 'key_red'), 'red');
      for (const [level, id] of [['team', 'green'], ['project', 'p-green'], ['key', 'key_green']] as const) assert.equal(await store.teamOf(level, id), undefined);
    });
  });
}
