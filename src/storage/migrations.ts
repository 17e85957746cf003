import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

/**
 * The one forward-only migration list, run at start-up on SQLite and PostgreSQL alike.
 * Append new entries; never edit or reorder a released one.
 */
const MIGRATIONS: Record<string, Migration> = {
  '0001-projects-and-keys': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('rpm_limit', 'integer')
        .addColumn('daily_token_cap', 'bigint')
        .addColumn('monthly_cost_cap_usd', 'real')
        .addColumn('allowed_models', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_updated_at').on('api_keys').column('updated_at').execute();
      await sql`insert into projects (id, name, created_at) values ('default', 'default', ${Date.now()})`.execute(db);
    },
  },
};

class InCodeMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export async function migrateToLatest(db: Kysely<unknown>): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeMigrations() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const name = failed?.migrationName ?? 'unknown';
    throw new Error(`database migration ${name} failed: ${(error as Error | undefined)?.message ?? 'see log'}`);
  }
}
