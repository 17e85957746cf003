import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Selectable } from 'kysely';
import type { Pool as PgPool } from 'pg';
import type { LimitSeed } from '../limits/index.js';
import type { Database, RequestLogsTable, Storage } from '../storage/index.js';
import { breaksConnection } from '../storage/index.js';
import type { RequestLogRow } from './log-entry.js';
import type { LogCursor } from './log-filters.js';
import type { LogAccess, LogFilter, UsageGrouping } from './types.js';

export type StoredLogRow = Selectable<RequestLogsTable>;
/** A row without its payloads and detail: what list pages carry. */
export type LogSummaryRow = Omit<StoredLogRow, 'request_payload' | 'response_payload' | 'detail'>;

export interface UsageRow {
  /** Epoch day number, model id or key id, depending on the grouping. */
  group: string | number | null;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costMicroUsd: number;
  /** Answered requests (499s too) whose cost is null: the cost total leaves them out. */
  unpricedRequests: number;
}

const DAY_MS = 86_400_000;
const EXPORT_PAGE_SIZE = 500;

const SUMMARY_COLUMNS = [
  'request_id',
  'started_at',
  'endpoint',
  'mode',
  'platform',
  'key_id',
  'project_id',
  'fingerprint',
  'requested_model',
  'resolved_model',
  'provider',
  'status',
  'error_code',
  'latency_ms',
  'upstream_latency_ms',
  'streaming',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'total_tokens',
  'image_count',
  'audio_seconds',
  'cost_micro_usd',
  'cost_flag',
  'media',
  'provider_request_id',
] as const;

type LogQuery<O> = SelectQueryBuilder<Database, 'request_logs', O>;

/**
 * Filters plus the caller's access. The access condition is always applied and AND-ed with
 * the filters, so no filter value can widen a project-scoped caller's view.
 */
function restrict<O>(query: LogQuery<O>, filter: LogFilter, access: LogAccess): LogQuery<O> {
  let restricted = query;
  if (access.projectId !== null) restricted = restricted.where('project_id', '=', access.projectId);
  if (filter.projectId !== undefined) restricted = restricted.where('project_id', '=', filter.projectId);
  if (filter.keyId !== undefined) restricted = restricted.where('key_id', '=', filter.keyId);
  const model = filter.model;
  if (model !== undefined) {
    restricted = restricted.where((eb) => eb.or([eb('requested_model', '=', model), eb('resolved_model', '=', model)]));
  }
  if (filter.since !== undefined) restricted = restricted.where('started_at', '>=', filter.since);
  if (filter.until !== undefined) restricted = restricted.where('started_at', '<', filter.until);
  if (filter.status !== undefined) {
    restricted = restricted.where('status', '>=', filter.status.min).where('status', '<=', filter.status.max);
  }
  return restricted;
}

function after<O>(query: LogQuery<O>, cursor: LogCursor | undefined): LogQuery<O> {
  if (cursor === undefined) return query;
  return query.where((eb) =>
    eb.or([
      eb('started_at', '<', cursor.startedAt),
      eb.and([eb('started_at', '=', cursor.startedAt), eb('request_id', '<', cursor.requestId)]),
    ]),
  );
}

// insertValues reads them again, in this order: a column added here goes there too (a test
// writes and reads back every column).
const ALL_COLUMNS = [...SUMMARY_COLUMNS, 'request_payload', 'response_payload', 'detail'] as const;

/**
 * A row's values in the order of ALL_COLUMNS, each read by its name: read in a loop over the
 * names, every read is a megamorphic lookup (5–18 % of the insert, microbenchmark).
 */
function insertValues(row: RequestLogRow): unknown[] {
  return [
    row.request_id,
    row.started_at,
    row.endpoint,
    row.mode ?? null,
    row.platform ?? null,
    row.key_id ?? null,
    row.project_id ?? null,
    row.fingerprint ?? null,
    row.requested_model ?? null,
    row.resolved_model ?? null,
    row.provider ?? null,
    row.status,
    row.error_code ?? null,
    row.latency_ms,
    row.upstream_latency_ms ?? null,
    row.streaming,
    row.prompt_tokens ?? null,
    row.completion_tokens ?? null,
    row.cached_tokens ?? null,
    row.total_tokens ?? null,
    row.image_count ?? null,
    row.audio_seconds ?? null,
    row.cost_micro_usd ?? null,
    row.cost_flag ?? null,
    row.media ?? null,
    row.provider_request_id ?? null,
    row.request_payload ?? null,
    row.response_payload ?? null,
    row.detail ?? null,
  ];
}

/** Writes a batch of rows in one transaction; a row whose id is already stored is left out. */
type BatchInsert = (rows: readonly RequestLogRow[]) => void | Promise<void>;

/** The INSERT of `rows` rows, with `placeholder(n)` for the n-th value (from 1). */
function insertText(rows: number, placeholder: (position: number) => string): string {
  const tuples = Array.from({ length: rows }, (_, row) => `(${ALL_COLUMNS.map((_, column) => placeholder(row * ALL_COLUMNS.length + column + 1)).join(', ')})`);
  return `insert into request_logs (${ALL_COLUMNS.join(', ')}) values ${tuples.join(', ')} on conflict (request_id) do nothing`;
}

/**
 * SQLite batch insert through one prepared statement, run once per row in a transaction:
 * about half the time of building and compiling a many-row INSERT through the query builder
 * for every batch (SQLite writes run on the event loop). The values are spread as arguments:
 * better-sqlite3 reads an array argument's elements through V8's API, ~430 instructions each.
 */
function sqliteInsert(sqlite: SqliteDatabase.Database): BatchInsert {
  const statement = sqlite.prepare(insertText(1, () => '?'));
  return sqlite.transaction((rows: readonly RequestLogRow[]) => {
    for (const row of rows) statement.run(...insertValues(row));
  });
}

/**
 * Rows per PostgreSQL statement: a batch goes out in statements of these sizes, largest
 * first (a full batch of the writer's default 100 rows is one), so a connection prepares at
 * most three. 100 rows bind 2,800 values, far below PostgreSQL's 65,535.
 */
const PG_STATEMENT_ROWS = [100, 10, 1] as const;

/**
 * PostgreSQL batch insert through named prepared statements, parsed once per connection:
 * building a many-row INSERT through the query builder for every batch cost about twice the
 * CPU per row (~15 against ~7 µs), and so did sending the same text unnamed each time.
 */
function pgInsert(pool: PgPool): BatchInsert {
  const statements = PG_STATEMENT_ROWS.map((size) => ({ size, name: `modelgate_request_logs_insert_${size}`, text: insertText(size, (position) => `$${position}`) }));
  return async (rows) => {
    const queries: { name: string; text: string; values: unknown[] }[] = [];
    let start = 0;
    for (const { size, name, text } of statements) {
      for (; rows.length - start >= size; start += size) {
        const values: unknown[] = [];
        for (let index = start; index < start + size; index += 1) values.push(...insertValues(rows[index]!));
        queries.push({ name, text, values });
      }
    }
    if (queries.length === 1) {
      await pool.query(queries[0]!);
      return;
    }
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      for (const query of queries) await client.query(query);
      await client.query('commit');
    } catch (error) {
      // A dead connection cannot roll back (the server does when it notices); a rollback
      // queued behind a missed answer would only wait out its own timeout.
      if (breaksConnection(error)) broken = error as Error;
      else {
        await client.query('rollback').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
      }
      throw error;
    } finally {
      // A connection that failed or could not even roll back is closed rather than handed on.
      client.release(broken);
    }
  };
}

/** A record the database would not store, and its reason (the database's message). */
export interface RefusedLogRow {
  requestId: string;
  reason: string;
}

/**
 * Whether a write failed on the data it carried rather than on the database: PostgreSQL's
 * SQLSTATE classes 22 (data exception, such as U+0000 in text or an integer out of range) and
 * 23 (integrity constraint), SQLite's constraint, type and size errors.
 */
function refusesData(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^2[23][0-9A-Z]{3}$/.test(code) || code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISMATCH' || code === 'SQLITE_TOOBIG';
}

function batchInsert(storage: Pick<Storage, 'sqlite' | 'pg'>): BatchInsert {
  if (storage.sqlite !== undefined) return sqliteInsert(storage.sqlite);
  if (storage.pg !== undefined) return pgInsert(storage.pg);
  throw new Error('the request log needs SQLite or PostgreSQL storage');
}

/** Usage groups in ascending order (days by number, ids by code unit), no key or model last. */
function compareGroups(a: string | number | null, b: string | number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The request log in the database: batch writes, queries, aggregates and retention. */
export class LogStore {
  private readonly db: Kysely<Database>;
  private readonly insert: BatchInsert;

  /** Queries go through the query builder; batch writes through the driver behind it (sqlite or pg), prepared. */
  constructor(storage: Pick<Storage, 'db' | 'sqlite' | 'pg'>) {
    this.db = storage.db;
    this.insert = batchInsert(storage);
  }

  /**
   * Writes a batch in one transaction. A record written twice keeps its first row. When the
   * database refuses a row's data (a value its column cannot hold), the batch is written
   * again a row at a time and the refused rows are returned, left out: retrying a batch that
   * holds such a row would hold back every later record. Any other failure is thrown, the
   * batch unwritten, for the writer to retry.
   */
  async insertBatch(rows: readonly RequestLogRow[]): Promise<RefusedLogRow[]> {
    if (rows.length === 0) return [];
    try {
      await this.insert(rows);
      return [];
    } catch (error) {
      if (!refusesData(error)) throw error;
    }
    const refused: RefusedLogRow[] = [];
    for (const row of rows) {
      try {
        await this.insert([row]);
      } catch (error) {
        if (!refusesData(error)) throw error;
        refused.push({ requestId: row.request_id, reason: (error as Error).message.slice(0, 300) });
      }
    }
    return refused;
  }

  /** Newest first, one page: rows and the cursor of the next page (null on the last). */
  async list(
    filter: LogFilter,
    access: LogAccess,
    pageSize: number,
    cursor?: LogCursor,
  ): Promise<{ rows: LogSummaryRow[]; next: LogCursor | null }> {
    const rows = await after(restrict(this.db.selectFrom('request_logs').select(SUMMARY_COLUMNS), filter, access), cursor)
      .orderBy('started_at', 'desc')
      .orderBy('request_id', 'desc')
      .limit(pageSize + 1)
      .execute();
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const next = rows.length > pageSize && last !== undefined ? { startedAt: last.started_at, requestId: last.request_id } : null;
    return { rows: page, next };
  }

  async get(requestId: string, access: LogAccess): Promise<StoredLogRow | undefined> {
    return restrict(this.db.selectFrom('request_logs').selectAll(), {}, access)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
  }

  /** Every matching row with payloads, newest first, read page by page (constant memory). */
  async *export(filter: LogFilter, access: LogAccess): AsyncGenerator<StoredLogRow> {
    let cursor: LogCursor | undefined;
    for (;;) {
      const rows = await after(restrict(this.db.selectFrom('request_logs').selectAll(), filter, access), cursor)
        .orderBy('started_at', 'desc')
        .orderBy('request_id', 'desc')
        .limit(EXPORT_PAGE_SIZE)
        .execute();
      yield* rows;
      const last = rows[rows.length - 1];
      if (rows.length < EXPORT_PAGE_SIZE || last === undefined) return;
      cursor = { startedAt: last.started_at, requestId: last.request_id };
    }
  }

  async usage(grouping: UsageGrouping, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
    // Integer division gives the epoch day on both databases (bigint / integer truncates).
    const group: RawBuilder<string | number | null> =
      grouping === 'day'
        ? sql`(started_at / ${sql.lit(DAY_MS)})`
        : grouping === 'model'
          ? sql`coalesce(resolved_model, requested_model)`
          : sql`key_id`;
    const rows = await restrict(this.db.selectFrom('request_logs'), filter, access)
      .select([
        group.as('group_value'),
        sql<number>`count(*)`.as('requests'),
        sql<number>`sum(case when status >= 400 then 1 else 0 end)`.as('errors'),
        sql<number | null>`sum(prompt_tokens)`.as('prompt_tokens'),
        sql<number | null>`sum(completion_tokens)`.as('completion_tokens'),
        sql<number | null>`sum(total_tokens)`.as('total_tokens'),
        sql<number | null>`sum(cost_micro_usd)`.as('cost_micro_usd'),
        // Answered (499: a client that left during the answer) but not priced.
        sql<number>`sum(case when cost_micro_usd is null and (status < 400 or status = 499) then 1 else 0 end)`.as('unpriced'),
      ])
      .groupBy(group)
      .execute();
    // Sorted here: the databases order NULL (and, by collation, text) differently.
    rows.sort((a, b) => compareGroups(a.group_value, b.group_value));
    return rows.map((row) => ({
      group: row.group_value,
      requests: Number(row.requests),
      errors: Number(row.errors),
      promptTokens: Number(row.prompt_tokens ?? 0),
      completionTokens: Number(row.completion_tokens ?? 0),
      totalTokens: Number(row.total_tokens ?? 0),
      costMicroUsd: Number(row.cost_micro_usd ?? 0),
      unpricedRequests: Number(row.unpriced),
    }));
  }

  /**
   * Deletes up to `batchSize` rows older than `cutoff`; returns how many. The bounded
   * sub-select keeps each statement (and its lock) short on both databases.
   */
  async deleteOlderThan(cutoff: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('request_logs')
      .where('request_id', 'in', (eb) =>
        eb.selectFrom('request_logs').select('request_id').where('started_at', '<', cutoff).limit(batchSize),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Tokens of the current UTC day and cost of the current UTC month, per key (limiter seeds). */
  async limitSeeds(now: number): Promise<LimitSeed[]> {
    const date = new Date(now);
    const dayStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    const rows = await this.db
      .selectFrom('request_logs')
      .select([
        'key_id',
        sql<number | null>`sum(case when started_at >= ${dayStart} then total_tokens else 0 end)`.as('day_tokens'),
        sql<number | null>`sum(cost_micro_usd)`.as('month_cost'),
      ])
      .where('key_id', 'is not', null)
      .where('started_at', '>=', monthStart)
      .groupBy('key_id')
      .execute();
    return rows.map((row) => ({
      keyId: row.key_id as string,
      dayTokens: Number(row.day_tokens ?? 0),
      monthCostMicroUsd: Number(row.month_cost ?? 0),
    }));
  }
}
