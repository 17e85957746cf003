import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { openStorage } from '../src/storage/index.js';
import { POSTGRES_URL, createPostgresDatabase } from './helpers/databases.js';

test(
  'PostgreSQL: an idle connection ended by the server does not crash the process; the next query reconnects',
  { skip: POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : false },
  async () => {
    const database = await createPostgresDatabase();
    const storage = await openStorage({ databaseUrl: database.url, dataDir: mkdtempSync(join(tmpdir(), 'modelgate-pg-')) });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      await sql`select 1`.execute(storage.db); // leaves an idle pooled connection
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      const name = new URL(database.url).pathname.slice(1);
      const ended = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
      await admin.end();
      assert.ok(ended.rowCount! >= 1);
      await new Promise((resolve) => setTimeout(resolve, 200)); // let the idle client see its socket close
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(storage.db);
      assert.equal(rows[0]!.one, 1);
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      await storage.close();
      await database.drop();
    }
  },
);

test('PostgreSQL that accepts connections but never answers stops start-up instead of holding it forever', { timeout: 60_000 }, async () => {
  // A pooler or proxy whose database is gone behaves so. With no connect timeout every query
  // waited for ever: start-up hung, and so did the request log's writes and the shutdown.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const { port } = silent.address() as { port: number };
  try {
    await assert.rejects(
      openStorage({ databaseUrl: `postgres://modelgate@127.0.0.1:${port}/modelgate`, dataDir: mkdtempSync(join(tmpdir(), 'modelgate-pg-')) }),
      /could not migrate the database: .*timeout/i,
    );
  } finally {
    for (const socket of sockets) socket.destroy();
    silent.close();
  }
});
