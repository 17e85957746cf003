import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The storage backends a storage test runs against: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL;

/**
 * Creates a fresh, empty PostgreSQL database for one test file and returns its URL and a
 * function that drops it, so tests never see each other's rows.
 */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (POSTGRES_URL === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const name = `modelgate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
