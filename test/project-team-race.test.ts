import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { ProjectStore, TeamStore } from '../src/keys/index.js';
import type { Storage } from '../src/storage/index.js';
import { openBackendStorage, STORAGE_BACKENDS } from './helpers/storage-backends.js';

/*
 * A project put into a team while the team is deleted: of the two, the later sees the other's
 * outcome, so no project is left in a deleted team. Only PostgreSQL runs the two at once (an
 * embedded SQLite writes one transaction at a time).
 */
const postgres = STORAGE_BACKENDS.find((backend) => backend.name === 'PostgreSQL')!;

describe('a project created in a team while the team is deleted', { skip: postgres.skip }, () => {
  let storage: Storage;
  let close: () => Promise<void>;

  before(async () => {
    ({ storage, close } = await openBackendStorage(postgres));
  });

  after(async () => close());

  test('waits for the delete and is then refused: no project is left without its team', async () => {
    const teams = new TeamStore(storage.db);
    const projects = new ProjectStore(storage.db);
    await teams.create('doomed', 'Doomed');
    let creating: Promise<unknown> | undefined;
    let settledDuringDelete = false;
    // The delete's own steps, as TeamStore.delete takes them, with the create started in between.
    await storage.db.transaction().execute(async (trx) => {
      await trx.updateTable('teams').set({ name: sql<string>`name` }).where('id', '=', 'doomed').execute();
      assert.equal((await trx.selectFrom('projects').select('id').where('team_id', '=', 'doomed').execute()).length, 0);
      creating = projects.create('late', 'late', 'doomed');
      creating.then(
        () => (settledDuringDelete = true),
        () => (settledDuringDelete = true),
      );
      await sleep(300);
      await trx.deleteFrom('teams').where('id', '=', 'doomed').execute();
    });
    assert.equal(settledDuringDelete, false, 'the create waited for the delete to commit');
    await assert.rejects(creating!, (error: Error & { code?: string; param?: string }) => error.message === 'There is no team "doomed". GET /admin/v1/teams lists them.');
    assert.equal(await projects.find('late'), undefined);
  });
});
