import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LogStore, toUsageView, type RequestLogRow } from '../src/logs/index.js';
import { openStorage, type Storage } from '../src/storage/index.js';
import { logRow } from './helpers/log-rows.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

/**
 * Usage grouped by team, agent and tag, and by key with the keys' names, on SQLite and
 * PostgreSQL: a project counts under the team it belongs to now, a key with two tags under
 * both, an agent run under its agent and, by model, under every model its nodes called.
 */

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const ALL = { projectId: null };

function row(id: string, overrides: Partial<RequestLogRow> = {}): RequestLogRow {
  return logRow(id, { started_at: NOW, project_id: 'lab' }, overrides);
}

const call = (model: string, tokens: number, cost: number | null) => ({
  purpose: `node:${model}`,
  model,
  provider: 'openai',
  usage: { promptTokens: tokens, completionTokens: 0, totalTokens: tokens, cachedPromptTokens: null },
  imageCount: null,
  costMicroUsd: cost,
  outcome: 'ok',
});

for (const backend of STORAGE_BACKENDS) {
  describe(`usage groupings on ${backend.name}`, { skip: backend.skip }, () => {
    let shared: SharedStorage;
    let storage: Storage;
    let store: LogStore;

    before(async () => {
      shared = await backend.create();
      storage = await openStorage({ databaseUrl: shared.env.DATABASE_URL, dataDir: shared.dataDir });
      store = new LogStore(storage);
      const { db } = storage;
      await db.insertInto('teams').values({ id: 'research', name: 'Research', created_at: NOW }).execute();
      await db
        .insertInto('projects')
        .values([
          { id: 'lab', name: 'lab', created_at: NOW, team_id: 'research', allowed_tools: null },
          { id: 'ops', name: 'ops', created_at: NOW, team_id: 'default', allowed_tools: null },
        ])
        .execute();
      const key = (id: string, project: string, name: string, tags: string[] | null) => ({
        id,
        project_id: project,
        name,
        secret_hash: `hash-${id}`,
        last4: '1234',
        scopes: '["model:request"]',
        status: 'active' as const,
        rpm_limit: null,
        daily_token_cap: null,
        monthly_cost_cap_usd: null,
        allowed_models: null,
        allowed_tools: null,
        allow_unpriced: 0,
        created_at: NOW,
        updated_at: NOW,
        tags: tags === null ? null : JSON.stringify(tags),
      });
      await db
        .insertInto('api_keys')
        .values([key('key_a', 'lab', 'Lab bot', ['class:101', 'pilot']), key('key_b', 'lab', 'Lab notebook', ['pilot']), key('key_c', 'ops', 'Ops cron', null)])
        .execute();
      await store.insertBatch([
        row('r1'),
        row('r2', { key_id: 'key_b', cost_micro_usd: 200, total_tokens: 30 }),
        row('r3', { key_id: 'key_c', project_id: 'ops', status: 500, error_code: 'provider_error', cost_micro_usd: 0, total_tokens: null }),
        row('r4', { key_id: null, project_id: null, fingerprint: null, requested_model: 'nope', resolved_model: null, status: 401, cost_micro_usd: null, total_tokens: null }),
        // An agent run of key_a: two nodes on gpt-4o-mini, one on gpt-4o; its record names no model.
        row('run1', {
          endpoint: '/v1/agents/tutor/runs',
          mode: 'agent',
          requested_model: null,
          resolved_model: null,
          agent: 'tutor',
          total_tokens: 60,
          cost_micro_usd: 700,
          detail: JSON.stringify({ calls: [call('gpt-4o-mini', 10, 100), call('gpt-4o', 30, 500), call('gpt-4o-mini', 20, 100)] }),
        }),
        // A run refused before any node ran.
        row('run2', { endpoint: '/v1/agents/tutor/runs', mode: 'agent', requested_model: null, resolved_model: null, agent: 'tutor', status: 429, total_tokens: null, cost_micro_usd: 0 }),
      ]);
    });

    after(async () => {
      await storage.close();
      await shared.dispose();
    });

    const summary = (rows: { group: string | number | null; requests: number; totalTokens: number; costMicroUsd: number }[]) =>
      rows.map((entry) => [entry.group, entry.requests, entry.totalTokens, entry.costMicroUsd]);

    test('by team: each project under its team, keyless records last; a moved project moves its records', async () => {
      const byTeam = await store.usage('team', {}, ALL);
      assert.deepEqual(summary(byTeam), [
        ['default', 1, 0, 0],
        ['research', 4, 105, 1000],
        [null, 1, 0, 0],
      ]);
      assert.deepEqual(toUsageView('team', byTeam[1]!).team_name, 'Research');
      await storage.db.updateTable('projects').set({ team_id: 'default' }).where('id', '=', 'lab').execute();
      try {
        assert.deepEqual(summary(await store.usage('team', {}, ALL)).slice(0, 1), [['default', 5, 105, 1000]]);
      } finally {
        await storage.db.updateTable('projects').set({ team_id: 'research' }).where('id', '=', 'lab').execute();
      }
      // A team admin's access (research's projects) leaves the rest out.
      assert.deepEqual(summary(await store.usage('team', {}, { projectId: null, projectIds: ['lab'] })), [['research', 4, 105, 1000]]);
    });

    test('by tag: a key with two tags counts under both; untagged keys and keyless records are the null group', async () => {
      const byTag = await store.usage('tag', {}, ALL);
      assert.deepEqual(summary(byTag), [
        ['class:101', 3, 75, 800],
        ['pilot', 4, 105, 1000],
        [null, 2, 0, 0],
      ]);
      assert.equal(toUsageView('tag', byTag[0]!).tag, 'class:101');
    });

    test('by agent: the runs under their agent, every other request in the null group', async () => {
      const byAgent = await store.usage('agent', {}, ALL);
      assert.deepEqual(summary(byAgent), [
        ['tutor', 2, 60, 700],
        [null, 4, 45, 300],
      ]);
      assert.equal(byAgent[0]!.errors, 1);
    });

    test("by model: an agent run's tokens and cost under the models its nodes called", async () => {
      const byModel = await store.usage('model', {}, ALL);
      assert.deepEqual(summary(byModel), [
        ['gpt-4o', 4, 75, 800],
        ['gpt-4o-mini', 1, 30, 200],
        ['nope', 1, 0, 0],
        [null, 1, 0, 0],
      ]);
    });

    test('by key: with the names of the keys', async () => {
      const byKey = (await store.usage('key', {}, ALL)).map((entry) => toUsageView('key', entry));
      assert.deepEqual(
        byKey.map((entry) => [entry.key_id, entry.key_name, entry.requests]),
        [
          ['key_a', 'Lab bot', 3],
          ['key_b', 'Lab notebook', 1],
          ['key_c', 'Ops cron', 1],
          [null, null, 1],
        ],
      );
    });
  });
}
