import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import { pageOfKeys } from '../../src/keys/index.js';
import { LogStore, type LogFilter } from '../../src/logs/index.js';
import type { Storage } from '../../src/storage/index.js';
import type { Database } from '../../src/storage/schema.js';
import { openBackendStorage, STORAGE_BACKENDS } from './storage-backends.js';

/**
 * The dashboard's pages on large tables: 100,000 keys and 1,000,000 request-log rows (each
 * with its write sequence, as the gateway writes them) on each database. What is checked is the plan each page query gets — an index read in the
 * page's order, never the whole table scanned or sorted — not a time.
 */

const KEYS = 100_000;
/**
 * Request-log rows per database. PostgreSQL's seeding (a million rows, then nine index builds)
 * took most of a test file's 120 s on a loaded two-core machine, so it gets 400,000: its planner
 * picks the same plans from 400,000 rows as from a million (checked by hand with a million).
 */
const LOG_ROWS = { sqlite: 1_000_000, postgres: 400_000 } as const;
const START = 1_700_000_000_000;


/**
 * Runs `fill` with the table's secondary indexes dropped, then builds them again from their own
 * definitions: one sorted build per index is much quicker than keeping each up to date row by row.
 */
async function withIndexesRebuilt(storage: Storage, table: string, fill: () => Promise<void>): Promise<void> {
  const definitions =
    storage.kind === 'sqlite'
      ? (await sql<{ name: string; definition: string }>`select name, sql as definition from sqlite_master where type = 'index' and tbl_name = ${table} and sql is not null`.execute(storage.db)).rows
      : (await sql<{ name: string; definition: string }>`select indexname as name, indexdef as definition from pg_indexes where tablename = ${table} and indexname not in (select conname from pg_constraint)`.execute(storage.db)).rows;
  assert.ok(definitions.length > 0);
  for (const { name } of definitions) await sql`drop index ${sql.id(name)}`.execute(storage.db);
  await fill();
  if (storage.kind === 'postgres') await sql`set maintenance_work_mem = '256MB'`.execute(storage.db);
  for (const { definition } of definitions) await sql.raw(definition).execute(storage.db);
}

async function seed(storage: Storage, logRows: number): Promise<void> {
  const series = (count: number) =>
    storage.kind === 'sqlite'
      ? sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count}) select i from n`
      : sql`select i from generate_series(1, ${count}) as i`;
  await sql`insert into projects (id, name, created_at) values ('team-a', 'team-a', 0), ('team-b', 'team-b', 0)`.execute(storage.db);
  await withIndexesRebuilt(storage, 'api_keys', async () => {
  await sql`
    insert into api_keys (id, project_id, name, secret_hash, last4, scopes, status, created_at, updated_at)
    select 'key_' || i, case when i % 3 = 0 then 'team-a' when i % 3 = 1 then 'team-b' else 'default' end, 'key number ' || i,
      'hash' || i, 'abcd', '["model:request"]', case when i % 10 = 0 then 'revoked' when i % 7 = 0 then 'paused' else 'active' end,
      cast(${START} as bigint) + i, cast(${START} as bigint) + i
    from (${series(KEYS)}) as s`.execute(storage.db);
  });
  await withIndexesRebuilt(storage, 'request_logs', async () => {
  await sql`
    insert into request_logs (request_id, seq, started_at, endpoint, platform, key_id, project_id, requested_model, resolved_model, status, latency_ms, streaming, total_tokens, cost_micro_usd)
    select 'req_' || i, i, cast(${START} as bigint) + cast(i as bigint) * 1000,
      case when i % 10 = 0 then '/v1/embeddings' else '/v1/chat/completions' end,
      case when i % 1000 = 0 then 'lms' else null end,
      'key_' || (i % 5000), 'default',
      case when i % 4 = 0 then 'gpt-4o' when i % 4 = 1 then 'gpt-4o-mini' when i % 4 = 2 then 'claude-sonnet-4-5' else 'gemini-2.5-flash' end,
      case when i % 4 = 0 then 'gpt-4o' when i % 4 = 1 then 'gpt-4o-mini' when i % 4 = 2 then 'claude-sonnet-4-5' else 'gemini-2.5-flash' end,
      case when i % 50 = 0 then 500 when i % 20 = 0 then 429 else 200 end, 100, 0, 10, 5
    from (${series(logRows)}) as s`.execute(storage.db);
  });
  await sql`analyze`.execute(storage.db);
}

/** The plan of a query as lines of text (SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN). */
async function planOf(storage: Storage, query: CompiledQuery): Promise<string[]> {
  if (storage.sqlite !== undefined) {
    return (storage.sqlite.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as { detail: string }[]).map((row) => row.detail);
  }
  const result = await storage.pg!.query(`explain ${query.sql}`, query.parameters as unknown[]);
  return (result.rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN'].trim());
}

/**
 * Fails when the plan reads the whole table, or sorts rows that no index search selected. A
 * range filter (a status class such as 5xx) may sort what its index found: the planner picks
 * that when the range is rare, and the page order's own index when it is common.
 */
function assertIndexedPage(storage: Storage, table: string, plan: string[], what: string): void {
  const text = plan.join('\n');
  if (storage.kind === 'sqlite') {
    assert.ok(!plan.some((line) => new RegExp(`^SCAN ${table}$`).test(line)), `${what} scans the whole table:\n${text}`);
    if (/USE TEMP B-TREE FOR ORDER BY/.test(text)) assert.match(text, new RegExp(`SEARCH ${table} USING (COVERING )?INDEX`), `${what} sorts rows no index selected:\n${text}`);
  } else {
    assert.ok(!new RegExp(`Seq Scan on ${table}`).test(text), `${what} scans the whole table:\n${text}`);
    // An Incremental Sort only orders rows of one started_at among themselves (the index gives the rest).
    if (/(^|->\s*)Sort\s+\(/m.test(text)) assert.match(text, /Index Cond|Bitmap Index Scan/, `${what} sorts rows no index selected:\n${text}`);
  }
}

/**
 * The request-log column each filter of a rare value reads (a key: 1 row in 5,000; a platform: 1
 * in 1,000). Where a value is common — a model in 4, an endpoint in 10, a status class in 50 —
 * walking the page order and skipping the rest can be the planner's right choice.
 */
const COLUMN_OF_FILTER: [keyof LogFilter, string][] = [
  ['keyId', 'key_id'],
  ['platform', 'platform'],
];

function assertSearchesColumn(storage: Storage, plan: string[], column: string, what: string): void {
  const text = plan.join('\n');
  const searched = storage.kind === 'sqlite' ? new RegExp(`SEARCH request_logs USING (COVERING )?INDEX \\w*${column}`) : new RegExp(`Index Cond: \\(.*${column}`);
  assert.match(text, searched, `${what} does not search an index of ${column}:\n${text}`);
}

/** One test file per database: seeding takes most of a file's time budget. */
export function describeLargeTables(kind: 'sqlite' | 'postgres'): void {
  const backend = STORAGE_BACKENDS.find((candidate) => candidate.name === (kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'))!;
  describe(`dashboard pages on large tables, ${backend.name}`, { skip: backend.skip }, () => {
    let storage: Storage;
    let close: () => Promise<void>;
    /** The same connection, recording every query it runs, so the real page queries can be explained. */
    let recorded: CompiledQuery[];
    let recording: Kysely<Database>;

    // Seeding a million rows takes a while on a busy machine; the checks themselves are quick.
    before(async () => {
      ({ storage, close } = await openBackendStorage(backend));
      await seed(storage, LOG_ROWS[kind]);
      recorded = [];
      const dialect = storage.sqlite !== undefined ? new SqliteDialect({ database: storage.sqlite }) : new PostgresDialect({ pool: storage.pg! });
      recording = new Kysely<Database>({ dialect, log: (event) => void recorded.push(event.query) });
    }, { timeout: 600_000 });
    after(async () => close());

    test('every key page, filtered or not, first or deep, reads an index in the page order', async () => {
      const deep = { createdAt: START + KEYS / 2, id: `key_${KEYS / 2}` };
      for (const filter of [{}, { projectId: 'team-a' }, { status: 'paused' as const }, { projectId: 'team-b', status: 'revoked' as const }]) {
        for (const cursor of [undefined, deep]) {
          recorded.length = 0;
          const page = await pageOfKeys(recording, { ...filter, limit: 50, cursor });
          assert.equal(page.rows.length, 50);
          assertIndexedPage(storage, 'api_keys', await planOf(storage, recorded[0]!), `keys ${JSON.stringify(filter)} ${cursor === undefined ? 'first' : 'deep'} page`);
        }
      }
    });

    test('paging through keys visits each key once, in order', async () => {
      const seen = new Set<string>();
      let cursor: { createdAt: number; id: string } | undefined;
      let previous = Number.POSITIVE_INFINITY;
      for (let page = 0; page < 20; page += 1) {
        const result = await pageOfKeys(storage.db, { projectId: 'team-a', status: 'active', limit: 100, cursor });
        for (const row of result.rows) {
          assert.ok(!seen.has(row.id));
          assert.ok(row.created_at < previous);
          previous = row.created_at;
          seen.add(row.id);
        }
        cursor = result.next ?? undefined;
      }
      assert.equal(seen.size, 2000);
    });

    test('every request-log filter of the dashboard reads an index in the page order', async () => {
      const store = new LogStore({ db: recording, ...(storage.sqlite !== undefined ? { sqlite: storage.sqlite } : { pg: storage.pg! }) });
      const filters: LogFilter[] = [
        {},
        { keyId: 'key_42' },
        { model: 'gpt-4o-mini' },
        { status: { min: 500, max: 599 } },
        { status: { min: 429, max: 429 } },
        { endpoint: '/v1/embeddings' },
        { platform: 'lms' },
        { since: START + 200_000_000, until: START + 300_000_000 },
        { keyId: 'key_7', since: START + 100_000_000 },
      ];
      for (const filter of filters) {
        for (const cursor of [undefined, { seq: LOG_ROWS[kind] / 2 }]) {
          recorded.length = 0;
          await store.list(filter, { projectId: null }, 50, cursor);
          const plan = await planOf(storage, recorded[0]!);
          const what = `logs ${JSON.stringify(filter)} ${cursor === undefined ? 'first' : 'deep'} page`;
          assertIndexedPage(storage, 'request_logs', plan, what);
          // A column filter searches an index of its column: walking the page-order index and
          // skipping the rows that do not match reads most of the table for a rare value.
          const column = COLUMN_OF_FILTER.find(([field]) => field in filter)?.[1];
          if (column !== undefined) assertSearchesColumn(storage, plan, column, what);
        }
      }
    });

    test('usage over a time range or a key, and the limiter seeds, read an index, not the whole table', async () => {
      const store = new LogStore({ db: recording, ...(storage.sqlite !== undefined ? { sqlite: storage.sqlite } : { pg: storage.pg! }) });
      const filters: [LogFilter, string][] = [
        [{ since: START + 200_000_000, until: START + 300_000_000 }, 'started_at'],
        [{ keyId: 'key_42' }, 'key_id'],
        [{ keyId: 'key_7', since: START + 100_000_000 }, 'key_id'],
      ];
      for (const [filter, column] of filters) {
        for (const grouping of ['day', 'model', 'key', 'project'] as const) {
          recorded.length = 0;
          await store.usage(grouping, filter, { projectId: null });
          const plan = await planOf(storage, recorded[0]!);
          const what = `usage by ${grouping} ${JSON.stringify(filter)}`;
          assertIndexedPage(storage, 'request_logs', plan, what);
          assertSearchesColumn(storage, plan, column, what);
        }
      }
      recorded.length = 0;
      // A month after every row: the seeds read none of them.
      await store.limitSeeds(Date.UTC(2023, 11, 5));
      const seeds = await planOf(storage, recorded[0]!);
      assertIndexedPage(storage, 'request_logs', seeds, 'limit seeds');
      assertSearchesColumn(storage, seeds, 'started_at', 'limit seeds');
    });
  });
}
