import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { StorageKind } from './database.js';

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
  '0002-request-logs': {
    async up(db: Kysely<unknown>) {
      // No foreign keys: a log row outlives the key or project it names.
      await db.schema
        .createTable('request_logs')
        .addColumn('request_id', 'text', (c) => c.primaryKey())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('mode', 'text')
        .addColumn('platform', 'text')
        .addColumn('key_id', 'text')
        .addColumn('project_id', 'text')
        .addColumn('fingerprint', 'text')
        .addColumn('requested_model', 'text')
        .addColumn('resolved_model', 'text')
        .addColumn('provider', 'text')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('error_code', 'text')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('upstream_latency_ms', 'integer')
        .addColumn('streaming', 'integer', (c) => c.notNull())
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('cached_tokens', 'integer')
        .addColumn('total_tokens', 'integer')
        .addColumn('image_count', 'integer')
        .addColumn('audio_seconds', 'real')
        .addColumn('cost_micro_usd', 'bigint')
        .addColumn('cost_flag', 'text')
        .addColumn('media', 'text')
        .addColumn('request_payload', 'text')
        .addColumn('response_payload', 'text')
        .addColumn('detail', 'text')
        .execute();
      await db.schema.createIndex('request_logs_started_at').on('request_logs').column('started_at').execute();
      await db.schema.createIndex('request_logs_key_started_at').on('request_logs').columns(['key_id', 'started_at']).execute();
      await db.schema.createIndex('request_logs_project_started_at').on('request_logs').columns(['project_id', 'started_at']).execute();
    },
  },
  '0003-agents': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('latest_draft', 'integer', (c) => c.notNull())
        .addColumn('published_version', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('agent_drafts')
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('graph', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_drafts_pk', ['agent_id', 'version'])
        .execute();
      await db.schema
        .createTable('agent_versions')
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('draft_version', 'integer', (c) => c.notNull())
        .addColumn('graph', 'text', (c) => c.notNull())
        .addColumn('published_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_versions_pk', ['agent_id', 'version'])
        .execute();
      await db.schema
        .createTable('agent_grants')
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_grants_pk', ['agent_id', 'key_id'])
        .execute();
      await db.schema
        .createTable('agent_conversations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('test', 'integer', (c) => c.notNull())
        .addColumn('message_count', 'integer', (c) => c.notNull())
        .addColumn('lock_run_id', 'text')
        .addColumn('lock_expires_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('agent_messages')
        .addColumn('conversation_id', 'text', (c) => c.notNull().references('agent_conversations.id'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('agent_messages_pk', ['conversation_id', 'seq'])
        .execute();
      await db.schema
        .createTable('agent_assets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('conversation_id', 'text')
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('mime_type', 'text')
        .addColumn('bytes', 'bigint')
        .addColumn('sha256', 'text')
        .addColumn('storage_key', 'text')
        .addColumn('source_url', 'text')
        .addColumn('filename', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('agent_assets_run').on('agent_assets').column('run_id').execute();
      await db.schema
        .createTable('agent_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
        .addColumn('agent_version', 'integer')
        .addColumn('draft_version', 'integer')
        .addColumn('test', 'integer', (c) => c.notNull())
        .addColumn('conversation_id', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error_code', 'text')
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('total_tokens', 'integer')
        .addColumn('cost_micro_usd', 'bigint')
        .addColumn('trace', 'text')
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .execute();
      await db.schema.createIndex('agent_runs_agent_started_at').on('agent_runs').columns(['agent_id', 'started_at']).execute();
    },
  },
};

/** Migrations that differ by database: appended after MIGRATIONS, under the same rule. */
function migrationsOf(kind: StorageKind): Record<string, Migration> {
  return {
    ...MIGRATIONS,
    '0004-cost-cap-double': {
      async up(db: Kysely<unknown>) {
        // PostgreSQL's real keeps ~7 significant digits: a cap of 123456.78 USD was read back as
        // 123456.8. SQLite's REAL is already a double. The table holds one row per key, so the
        // rewrite is quick.
        if (kind !== 'postgres') return;
        await db.schema.alterTable('api_keys').alterColumn('monthly_cost_cap_usd', (column) => column.setDataType('double precision')).execute();
      },
    },
    '0013-pricing-provider-request-id': {
      async up(db: Kysely<unknown>) {
        // The vendors' own ids of a request's provider calls, for their support.
        await db.schema.alterTable('request_logs').addColumn('provider_request_id', 'text').execute();
      },
    },
    '0015-secrets-agent-messages-created-at': {
      async up(db: Kysely<unknown>) {
        // Agent history is deleted by age with the request log's retention.
        await db.schema.createIndex('agent_messages_created_at').on('agent_messages').column('created_at').execute();
      },
    },
  };
}

class InCodeMigrations implements MigrationProvider {
  constructor(private readonly kind: StorageKind) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return migrationsOf(this.kind);
  }
}

export async function migrateToLatest(db: Kysely<unknown>, kind: StorageKind): Promise<void> {
  const migrator = new Migrator({ db, provider: new InCodeMigrations(kind) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const reason = (error as Error | undefined)?.message ?? 'see log';
    // No migration failed when the database could not be reached (refused, unknown host or role).
    throw new Error(failed !== undefined ? `database migration ${failed.migrationName} failed: ${reason}` : `could not migrate the database: ${reason}`, {
      cause: error,
    });
  }
}
