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
    '0012-logs-write-sequence-and-compressed-payloads': {
      async up(db: Kysely<unknown>) {
        // Existing rows keep their text payloads and get no sequence: rewriting a log table of
        // any size at start-up would hold the gateway down for as long as it took.
        await db.schema.alterTable('request_logs').addColumn('seq', 'bigint').execute();
        await db.schema.alterTable('request_logs').addColumn('payloads', kind === 'postgres' ? 'bytea' : 'blob').execute();
        await db.schema.alterTable('request_logs').addColumn('payloads_omitted', 'text').execute();
        await db.schema.createIndex('request_logs_seq').unique().on('request_logs').column('seq').execute();
        await db.schema
          .createTable('request_log_totals')
          .addColumn('id', 'integer', (c) => c.primaryKey())
          .addColumn('last_seq', 'bigint', (c) => c.notNull())
          .addColumn('records', 'bigint', (c) => c.notNull())
          .addColumn('payload_bytes', 'bigint', (c) => c.notNull())
          .addColumn('payloads_from_seq', 'bigint', (c) => c.notNull())
          .execute();
        await sql`insert into request_log_totals (id, last_seq, records, payload_bytes, payloads_from_seq) values (1, 0, 0, 0, 0)`.execute(db);
        if (kind === 'postgres') await countWithStatementTriggers(db);
        else await countWithRowTriggers(db);
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
    '0016-accounts-users-and-sessions': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('dashboard_users')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('email', 'text', (c) => c.notNull().unique())
          .addColumn('role', 'text', (c) => c.notNull())
          .addColumn('password_hash', 'text', (c) => c.notNull())
          .addColumn('disabled', 'integer', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('dashboard_sessions')
          .addColumn('token_hash', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull().references('dashboard_users.id'))
          .addColumn('address', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
          .addColumn('expires_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('dashboard_sessions_user').on('dashboard_sessions').column('user_id').execute();
        await db.schema
          .createTable('dashboard_sign_in_failures')
          .addColumn('subject', 'text', (c) => c.notNull())
          .addColumn('failed_at', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('dashboard_sign_in_failures_subject').on('dashboard_sign_in_failures').columns(['subject', 'failed_at']).execute();
        await db.schema.createIndex('dashboard_sign_in_failures_failed_at').on('dashboard_sign_in_failures').column('failed_at').execute();
      },
    },
    '0016-accounts-key-and-log-list-indexes': {
      async up(db: Kysely<unknown>) {
        // The dashboard's key list: newest first, by project and state, a keyset page at a time.
        const keyIndexes: [string, string[]][] = [
          ['api_keys_created', ['created_at', 'id']],
          ['api_keys_project_created', ['project_id', 'created_at', 'id']],
          ['api_keys_status_created', ['status', 'created_at', 'id']],
          ['api_keys_project_status_created', ['project_id', 'status', 'created_at', 'id']],
        ];
        for (const [name, columns] of keyIndexes) await db.schema.createIndex(name).on('api_keys').columns(columns).execute();
        // Every filter of the request log, each in the list's order (newest written first, by write
        // sequence), so a filtered page reads the rows it shows instead of the whole table. Records
        // written before the sequence existed page by start time with 0002's indexes, and leave by age.
        for (const column of ['key_id', 'project_id', 'requested_model', 'resolved_model', 'status', 'endpoint', 'platform']) {
          await db.schema.createIndex(`request_logs_${column}_seq`).on('request_logs').columns([column, 'seq']).execute();
        }
      },
    },
    '0019-logs-agent-slug': {
      async up(db: Kysely<unknown>) {
        // An agent run's slug beside its record, so the list tells the runs of one agent from another.
        await db.schema.alterTable('request_logs').addColumn('agent', 'text').execute();
      },
    },
    '0021-responses-stored-responses': {
      async up(db: Kysely<unknown>) {
        // The owner is a key id (or 'anonymous' while keys are not required); no foreign key, as in the
        // request log. Retention deletes rows by age, DELETE /v1/responses/{id} on request.
        await db.schema
          .createTable('stored_responses')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('owner', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('model', 'text', (c) => c.notNull())
          .addColumn('native', 'integer', (c) => c.notNull())
          .addColumn('response', 'text', (c) => c.notNull())
          .addColumn('input_items', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('stored_responses_created_at').on('stored_responses').column('created_at').execute();
      },
    },
    '0031-mcp-allowed-tools': {
      async up(db: Kysely<unknown>) {
        // allowedTools of keys and projects (docs/mcp.md): null = every tool of every MCP server.
        await db.schema.alterTable('api_keys').addColumn('allowed_tools', 'text').execute();
        await db.schema.alterTable('projects').addColumn('allowed_tools', 'text').execute();
      },
    },
    '0033-keys-allow-unpriced': {
      async up(db: Kysely<unknown>) {
        // A key with a monthly cost cap is refused models without a price unless this says otherwise (docs/limits.md).
        await db.schema.alterTable('api_keys').addColumn('allow_unpriced', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      },
    },
    '0031-mcp-servers': {
      async up(db: Kysely<unknown>) {
        // MCP servers an administrator added through the admin API (docs/mcp.md): the entry as JSON,
        // the same shape as a config file's mcp.servers[] entry (names of variables, never values).
        await db.schema
          .createTable('mcp_servers')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('definition', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0024-editor-agent-conversation-list': {
      async up(db: Kysely<unknown>) {
        // The dashboard's list of a key's conversations with an agent, newest first.
        await db.schema.createIndex('agent_conversations_agent_owner').on('agent_conversations').columns(['agent_id', 'owner', 'test', 'updated_at', 'id']).execute();
      },
    },
    '0030-logs-drop-start-time-filter-indexes': {
      async up(db: Kysely<unknown>) {
        // The list filters by key and by project through 0016's (column, seq) indexes; the
        // (column, started_at) ones were kept only for rows written before the sequence, which
        // those indexes page as well, and cost every insert two index entries. The start-time
        // index stays: retention, usage's time range and the limiter's seeds read by start time.
        await db.schema.dropIndex('request_logs_key_started_at').ifExists().execute();
        await db.schema.dropIndex('request_logs_project_started_at').ifExists().execute();
      },
    },
    '0037-logs-cache': {
      async up(db: Kysely<unknown>) {
        // A request answered from the response cache (docs/caching.md): `hit`, `miss` or
        // `bypass` where a cache policy applied, and for a hit what its answer had cost, so
        // usage can show what the cache saved.
        await db.schema.alterTable('request_logs').addColumn('cache_status', 'text').execute();
        await db.schema.alterTable('request_logs').addColumn('cache_saved_micro_usd', 'bigint').execute();
      },
    },
    '0040-keys-expiry-rotation-tags': {
      async up(db: Kysely<unknown>) {
        // Keys as operators manage them (docs/admin-api.md): an expiry, the secret a rotation
        // replaced (accepted through its grace period), tags and free metadata.
        for (const [column, type] of [
          ['expires_at', 'bigint'],
          ['previous_secret_hash', 'text'],
          ['previous_secret_expires_at', 'bigint'],
          ['tags', 'text'],
          ['metadata', 'text'],
        ] as const) {
          await db.schema.alterTable('api_keys').addColumn(column, type).execute();
        }
        // An instance that does not hold a secret looks it up by either hash.
        await db.schema.createIndex('api_keys_previous_secret_hash').on('api_keys').column('previous_secret_hash').execute();
      },
    },
    '0040-audit-log': {
      async up(db: Kysely<unknown>) {
        // Administrative changes (src/audit, docs/admin-api.md#audit-log), kept for audit.retentionDays.
        // Ids sort in time order: the list pages by id; each filter has an (column, id) index.
        await db.schema
          .createTable('audit_log')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('at', 'bigint', (c) => c.notNull())
          .addColumn('actor_kind', 'text', (c) => c.notNull())
          .addColumn('actor', 'text', (c) => c.notNull())
          .addColumn('actor_id', 'text')
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('target_type', 'text', (c) => c.notNull())
          .addColumn('target_id', 'text')
          .addColumn('before', 'text')
          .addColumn('after', 'text')
          .addColumn('request_id', 'text')
          .addColumn('address', 'text')
          .execute();
        await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
        await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor', 'id']).execute();
        await db.schema.createIndex('audit_log_target').on('audit_log').columns(['target_id', 'id']).execute();
        await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'id']).execute();
      },
    },
    '0050-teams': {
      async up(db: Kysely<unknown>) {
        // Projects belong to a team (docs/admin-api.md#teams); every existing project joins
        // `default`, created here as the `default` project was by the first migration.
        await db.schema
          .createTable('teams')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull().unique())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
        await sql`insert into teams (id, name, created_at) values ('default', 'default', ${Date.now()})`.execute(db);
        await db.schema.alterTable('projects').addColumn('team_id', 'text', (c) => c.notNull().defaultTo('default')).execute();
        await db.schema.createIndex('projects_team_id').on('projects').column('team_id').execute();
      },
    },
    '0060-budgets': {
      async up(db: Kysely<unknown>) {
        // Budgets on a team, project, key or end user (src/budgets, docs/limits.md#budgets), their
        // alerts (one row per budget, period and threshold: made once across instances), and
        // the end user of each request, which usage groups by and end-user budgets are seeded from.
        await db.schema
          .createTable('budgets')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('level', 'text', (c) => c.notNull())
          .addColumn('target', 'text', (c) => c.notNull())
          .addColumn('usd', 'real')
          .addColumn('tokens', 'bigint')
          .addColumn('period', 'text', (c) => c.notNull())
          .addColumn('reset_tz', 'text', (c) => c.notNull())
          .addColumn('thresholds', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addUniqueConstraint('budgets_level_target', ['level', 'target'])
          .execute();
        await db.schema
          .createTable('budget_alerts')
          .addColumn('id', 'text', (c) => c.notNull())
          .addColumn('budget_id', 'text', (c) => c.notNull())
          .addColumn('period_id', 'text', (c) => c.notNull())
          .addColumn('threshold', 'integer', (c) => c.notNull())
          .addColumn('level', 'text', (c) => c.notNull())
          .addColumn('target', 'text', (c) => c.notNull())
          .addColumn('spent_micro_usd', 'bigint', (c) => c.notNull())
          .addColumn('spent_tokens', 'bigint', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('next_attempt_at', 'bigint')
          .addColumn('last_error', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('delivered_at', 'bigint')
          .addPrimaryKeyConstraint('budget_alerts_once', ['budget_id', 'period_id', 'threshold'])
          .execute();
        // No index of its own: usage groups by it over a time range (the start-time index), and an
        // end-user budget's seed is read once per period, not per request.
        await db.schema.alterTable('request_logs').addColumn('end_user', 'text').execute();
      },
    },
    '0052-provider-instances': {
      async up(db: Kysely<unknown>) {
        // Providers and credentials an administrator added (src/provider-instances, docs/providers.md):
        // settings without their secrets as JSON; the secrets sealed with the gateway's encryption key.
        await db.schema
          .createTable('provider_instances')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('kind', 'text', (c) => c.notNull())
          .addColumn('settings', 'text', (c) => c.notNull())
          .addColumn('secrets', 'text', (c) => c.notNull())
          .addColumn('fingerprints', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0062-guardrails': {
      async up(db: Kysely<unknown>) {
        // Guardrails an administrator defined (docs/guardrails.md#guardrails-defined-in-the-dashboard):
        // each entry as the config file's guardrails[] takes it, as JSON. A webhook's key is the
        // name of an environment variable, so nothing secret is kept here.
        await db.schema
          .createTable('guardrails')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('definition', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0051-dashboard-sso': {
      async up(db: Kysely<unknown>) {
        // Dashboard accounts signed in through OpenID Connect (docs/security.md#single-sign-on):
        // the provider's subject (`<issuer> <sub>`, unique), and the teams a `team_admin` manages.
        await db.schema.alterTable('dashboard_users').addColumn('sso_subject', 'text').execute();
        await db.schema.alterTable('dashboard_users').addColumn('team_ids', 'text').execute();
        await db.schema.createIndex('dashboard_users_sso_subject').unique().on('dashboard_users').column('sso_subject').execute();
        // A sign-in under way at the provider: its state (hashed), PKCE verifier and nonce,
        // kept until the browser comes back (or ten minutes), on every instance.
        await db.schema
          .createTable('dashboard_oidc_logins')
          .addColumn('state_hash', 'text', (c) => c.primaryKey())
          .addColumn('code_verifier', 'text', (c) => c.notNull())
          .addColumn('nonce', 'text', (c) => c.notNull())
          .addColumn('return_to', 'text', (c) => c.notNull())
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .execute();
      },
    },
    '0061-live-settings': {
      async up(db: Kysely<unknown>) {
        // Catalog models, aliases and routing entries an administrator set through the admin API
        // (src/live-settings, docs/catalog.md#models-managed-live), layered over the config file's:
        // one row per setting, its value as JSON, read whole by every instance when one announces a change.
        await db.schema
          .createTable('live_settings')
          .addColumn('scope', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('note', 'text')
          .addColumn('updated_by', 'text')
          .addColumn('created_at', 'bigint', (c) => c.notNull())
          .addColumn('updated_at', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint('live_settings_pk', ['scope', 'name'])
          .execute();
      },
    },
    '0063-logs-partial-filter-indexes': {
      async up(db: Kysely<unknown>) {
        // Three of 0016's filter indexes hold only the records their filter can find: the
        // resolved model where it is not the requested one (records from now on store it empty
        // then, and a model filter finds them through the requested model), statuses of 400 and
        // up (a filter for successes pages the list in order, where nearly every record is one),
        // and a platform where one is set. Most records then add no entry to them; a filter's
        // own condition implies the index's (log-queries.ts adds the model's for SQLite).
        await db.schema.dropIndex('request_logs_resolved_model_seq').ifExists().execute();
        await db.schema.dropIndex('request_logs_status_seq').ifExists().execute();
        await db.schema.dropIndex('request_logs_platform_seq').ifExists().execute();
        await db.schema
          .createIndex('request_logs_resolved_model_seq')
          .on('request_logs')
          .columns(['resolved_model', 'seq'])
          .where(sql<boolean>`resolved_model <> ''`)
          .execute();
        await db.schema.createIndex('request_logs_status_seq').on('request_logs').columns(['status', 'seq']).where(sql<boolean>`status >= 400`).execute();
        await db.schema.createIndex('request_logs_platform_seq').on('request_logs').columns(['platform', 'seq']).where(sql<boolean>`platform is not null`).execute();
      },
    },
  };
}

/**
 * SQLite: row triggers keep request_log_totals' counts on every delete and payload change
 * (retention, the size cap, an operator's own statement). Inserts count in the writer's
 * transaction, which also hands out the write sequence.
 */
async function countWithRowTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create trigger request_logs_counted_delete after delete on request_logs when old.seq is not null begin
    update request_log_totals set records = records - 1, payload_bytes = payload_bytes - coalesce(length(old.payloads), 0) where id = 1;
  end`.execute(db);
  await sql`create trigger request_logs_counted_update after update of payloads on request_logs when old.seq is not null begin
    update request_log_totals set payload_bytes = payload_bytes - coalesce(length(old.payloads), 0) + coalesce(length(new.payloads), 0) where id = 1;
  end`.execute(db);
}

/** PostgreSQL: the same counts, one update per statement (a row trigger would update the totals row once per row). */
async function countWithStatementTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`alter table request_logs alter column payloads set storage external`.execute(db); // compressed already
  await sql`create function request_logs_counted_delete() returns trigger language plpgsql as $$
    begin
      update request_log_totals set
        records = records - (select count(*) from gone where seq is not null),
        payload_bytes = payload_bytes - (select coalesce(sum(octet_length(payloads)), 0) from gone where seq is not null)
      where id = 1;
      return null;
    end $$`.execute(db);
  await sql`create trigger request_logs_counted_delete after delete on request_logs
    referencing old table as gone for each statement execute function request_logs_counted_delete()`.execute(db);
  await sql`create function request_logs_counted_update() returns trigger language plpgsql as $$
    begin
      update request_log_totals set payload_bytes = payload_bytes
        - (select coalesce(sum(octet_length(payloads)), 0) from old_rows where seq is not null)
        + (select coalesce(sum(octet_length(payloads)), 0) from new_rows where seq is not null)
      where id = 1;
      return null;
    end $$`.execute(db);
  await sql`create trigger request_logs_counted_update after update on request_logs
    referencing old table as old_rows new table as new_rows for each statement execute function request_logs_counted_update()`.execute(db);
}

class InCodeMigrations implements MigrationProvider {
  constructor(private readonly kind: StorageKind) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    return migrationsOf(this.kind);
  }
}

export async function migrateToLatest(db: Kysely<unknown>, kind: StorageKind): Promise<void> {
  // Branches developed side by side each append under their own number: a database may have run
  // a later-numbered one before an earlier one arrives.
  const migrator = new Migrator({ db, provider: new InCodeMigrations(kind), allowUnorderedMigrations: true });
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
