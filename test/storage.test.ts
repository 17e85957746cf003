import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { migrateToLatest } from '../src/storage/migrations.js';
import { adminKeysRoutes } from '../src/server/routes/admin-keys.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';
import { STORAGE_BACKENDS, type SharedStorage } from './helpers/storage-backends.js';

interface MigrationRecord {
  name: string;
  timestamp: string;
}

async function appliedMigrations(gateway: TestGateway): Promise<MigrationRecord[]> {
  const { rows } = await sql<MigrationRecord>`select name, timestamp from kysely_migration order by name`.execute(gateway.gateway.storage.db);
  return rows.map((row) => ({ name: row.name, timestamp: String(row.timestamp) }));
}

async function probe(gateway: TestGateway, secret: string): Promise<number> {
  const response = await fetch(`${gateway.url}${probePath('model:request')}`, {
    method: 'POST',
    headers: { 'x-api-key': secret, 'content-type': 'application/json' },
    body: '{}',
  });
  await response.arrayBuffer();
  return response.status;
}

for (const backend of STORAGE_BACKENDS) {
  describe(`storage (${backend.name})`, { skip: backend.skip }, () => {
    let storage: SharedStorage;
    const start = () => startTestGateway({ env: storage.env, dataDir: storage.dataDir, routes: [adminKeysRoutes, probeRoutes] });

    before(async () => {
      storage = await backend.create();
    });
    after(async () => {
      await storage?.dispose();
    });

    test('migrations run once, are idempotent on restart, and keys survive a restart', async () => {
      const first = await start();
      let migrations: MigrationRecord[];
      let active: { id: string; secret: string };
      let paused: { id: string; secret: string };
      try {
        migrations = await appliedMigrations(first);
        assert.ok(migrations.some((migration) => migration.name === '0001-projects-and-keys'));
        assert.equal(new Set(migrations.map((migration) => migration.name)).size, migrations.length);

        // A cost cap of 9 significant digits: PostgreSQL's real read it back as 1234567.9 until 0004.
        active = (await first.admin('POST', '/admin/v1/keys', { name: 'survivor', project: 'team', scopes: ['model:request'], limits: { rpm: 5, monthly_cost_usd: 1234567.89 } })).body;
        paused = (await first.admin('POST', '/admin/v1/keys', { name: 'sleeper', scopes: ['model:request'] })).body;
        assert.equal((await first.admin('POST', `/admin/v1/keys/${paused.id}/pause`)).status, 200);

        // Running the migrator again on an up-to-date database changes nothing.
        await migrateToLatest(first.gateway.storage.db as Kysely<unknown>, first.gateway.storage.kind);
        assert.deepEqual(await appliedMigrations(first), migrations);
      } finally {
        await first.close();
      }

      const second = await start();
      try {
        assert.deepEqual(await appliedMigrations(second), migrations, 'a restart must not re-run or re-record a migration');
        const projects = (await second.admin('GET', '/admin/v1/projects')).body.data as { id: string }[];
        assert.equal(projects.filter((project) => project.id === 'default').length, 1);
        assert.ok(projects.some((project) => project.id === 'team'));

        const shown = await second.admin('GET', `/admin/v1/keys/${active.id}`);
        assert.equal(shown.status, 200);
        assert.equal(shown.body.project_id, 'team');
        assert.deepEqual(shown.body.limits, { rpm: 5, daily_tokens: null, monthly_cost_usd: 1234567.89 });
        assert.equal(await probe(second, active.secret), 200);

        assert.equal((await second.admin('GET', `/admin/v1/keys/${paused.id}`)).body.status, 'paused');
        assert.equal(await probe(second, paused.secret), 403);
      } finally {
        await second.close();
      }
    });
  });
}
