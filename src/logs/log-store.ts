import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder, type Selectable } from 'kysely';
import type { Pool as PgPool } from 'pg';
import type { LimitSeed } from '../limits/index.js';
import type { Database, RequestLogsTable, Storage } from '../storage/index.js';
import { breaksConnection } from '../storage/index.js';
import type { RequestLogRow } from './log-entry.js';
import { packPayloads, unpackPayloads } from './payload-codec.js';
import { whereEndpointAndPlatform, type LogCursor } from './log-filters.js';
import type { LogAccess, LogFilter, UsageGrouping } from './types.js';

/** What list pages carry: a record without its payloads and detail. */
export type LogSummaryRow = Omit<Selectable<RequestLogsTable>, 'request_payload' | 'response_payload' | 'detail' | 'payloads' | 'payloads_omitted'>;
/** A record in full, its payloads decompressed (the JSON texts as they were written). */
export type StoredLogRow = LogSummaryRow & Pick<Selectable<RequestLogsTable>, 'request_payload' | 'response_payload' | 'detail' | 'payloads_omitted'>;

/** What the request log holds, from the counts its writes and triggers keep, and the database's own size. */
export interface LogStoreSize {
  /** Records written since the write sequence (older ones are not counted). */
  records: number;
  /** Compressed payload bytes of those records. */
  payloadBytes: number;
  /** Bytes on disk: the SQLite file in use, or PostgreSQL's request_logs with its indexes and TOAST. */
  databaseBytes: number;
}

export interface UsageRow {
  /** Epoch day number, model id, key id or project id, depending on the grouping. */
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
/** Records an export lists per query (without their payloads: small). */
const EXPORT_PAGE_SIZE = 500;
/** Stored bytes of the records whose payloads an export reads in one query: what it holds in memory at most (plus one record). */
export const EXPORT_BATCH_BYTES = 1024 * 1024;

const SUMMARY_COLUMNS = [
  'request_id',
  'seq',
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
  'agent',
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
  return whereEndpointAndPlatform(restricted, filter);
}

/** Records written before the write sequence, after a cursor into them (ordered by start time). */
function afterLegacy<O>(query: LogQuery<O>, cursor: LogCursor | undefined): LogQuery<O> {
  const legacy = query.where('seq', 'is', null);
  if (cursor === undefined || !('startedAt' in cursor)) return legacy;
  return legacy.where((eb) =>
    eb.or([
      eb('started_at', '<', cursor.startedAt),
      eb.and([eb('started_at', '=', cursor.startedAt), eb('request_id', '<', cursor.requestId)]),
    ]),
  );
}

function cursorOf(row: LogSummaryRow): LogCursor {
  return row.seq === null ? { startedAt: row.started_at, requestId: row.request_id } : { seq: Number(row.seq) };
}

// insertValues reads them again, in this order: a column added here goes there too (a test
// writes and reads back every column).
const ALL_COLUMNS = [...SUMMARY_COLUMNS, 'payloads', 'payloads_omitted', 'detail'] as const;

/** A row ready to insert: its payloads compressed (their stored size is what the totals count). */
interface PackedRow {
  row: RequestLogRow;
  payloads: Buffer | null;
}

function packRow(row: RequestLogRow): PackedRow {
  return { row, payloads: packPayloads(row.request_payload, row.response_payload) };
}

function payloadBytes(rows: readonly PackedRow[]): number {
  let bytes = 0;
  for (const { payloads } of rows) bytes += payloads?.length ?? 0;
  return bytes;
}

/**
 * A row's values in the order of ALL_COLUMNS, each read by its name: read in a loop over the
 * names, every read is a megamorphic lookup, a visible part of the insert.
 */
function insertValues({ row, payloads }: PackedRow, seq: number): unknown[] {
  return [
    row.request_id,
    seq,
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
    row.agent ?? null,
    payloads,
    row.payloads_omitted ?? null,
    row.detail ?? null,
  ];
}

/**
 * Hands out `count` write sequence numbers and counts the records and payload bytes about to
 * be written; returns the last number. The totals row stays locked until the transaction
 * commits, so sequence order is commit order across every instance: a reader that saw
 * sequence n never sees a smaller one appear later, and a cursor cannot skip a record.
 */
const RESERVE_SEQUENCE = 'update request_log_totals set last_seq = last_seq + ?, records = records + ?, payload_bytes = payload_bytes + ? where id = 1 returning last_seq';
/** Takes back the counts of rows that were already stored (a batch written twice). */
const UNCOUNT = 'update request_log_totals set records = records - ?, payload_bytes = payload_bytes - ? where id = 1';

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
 * better-sqlite3 reads an array argument's elements one by one through V8's API, which is slow.
 */
function sqliteInsert(sqlite: SqliteDatabase.Database): BatchInsert {
  const statement = sqlite.prepare(insertText(1, () => '?'));
  const reserve = sqlite.prepare<[number, number, number], { last_seq: number }>(RESERVE_SEQUENCE);
  const uncount = sqlite.prepare(UNCOUNT);
  const write = sqlite.transaction((rows: readonly RequestLogRow[]) => {
    const packed = rows.map(packRow);
    const last = reserve.get(packed.length, packed.length, payloadBytes(packed))!.last_seq;
    const skipped: PackedRow[] = [];
    packed.forEach((row, index) => {
      if (statement.run(...insertValues(row, last - packed.length + 1 + index)).changes === 0) skipped.push(row);
    });
    if (skipped.length > 0) uncount.run(skipped.length, payloadBytes(skipped));
  });
  // IMMEDIATE: the write lock from the start, so the sequence read is the one committed.
  return (rows) => write.immediate(rows);
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
 * CPU per row, and so did sending the same text unnamed each time. One
 * transaction per batch: the write sequence is handed out under the totals row's lock.
 */
function pgInsert(pool: PgPool): BatchInsert {
  const statements = PG_STATEMENT_ROWS.map((size) => ({
    size,
    name: `modelgate_request_logs_insert_${size}`,
    text: `${insertText(size, (position) => `$${position}`)} returning request_id`,
  }));
  return async (rows) => {
    const packed = rows.map(packRow);
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      // One round trip: every number is computed here, so it can be written into the text.
      const reserve = RESERVE_SEQUENCE.replace('?', String(packed.length)).replace('?', String(packed.length)).replace('?', String(payloadBytes(packed)));
      const [, reserved] = (await client.query(`begin; ${reserve}`)) as unknown as [unknown, { rows: { last_seq: number }[] }];
      let seq = Number(reserved.rows[0]!.last_seq) - packed.length + 1;
      const inserted = new Set<string>();
      let start = 0;
      for (const { size, name, text } of statements) {
        for (; packed.length - start >= size; start += size) {
          const values: unknown[] = [];
          for (let index = start; index < start + size; index += 1) values.push(...insertValues(packed[index]!, seq++));
          const result = await client.query<{ request_id: string }>({ name, text, values });
          for (const { request_id } of result.rows) inserted.add(request_id);
        }
      }
      const skipped = packed.filter(({ row }) => !inserted.has(row.request_id));
      if (skipped.length > 0) await client.query(UNCOUNT.replace('?', '$1').replace('?', '$2'), [skipped.length, payloadBytes(skipped)]);
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

/** `PRAGMA auto_vacuum` of a database that gives free pages back on `incremental_vacuum`. */
const SQLITE_INCREMENTAL_VACUUM = 2;
/** A record's bytes beside its payloads, indexes included (docs/logging.md, "Size and retention"). */
const SQLITE_RECORD_BYTES = 350;
const POSTGRES_RECORD_BYTES = 450;

/** The columns of a record in full beyond its summary. */
const CONTENT_COLUMNS = ['payloads', 'request_payload', 'response_payload', 'payloads_omitted', 'detail'] as const;

/** A record with its payloads as JSON text: decompressed, or as written before payloads were compressed. */
function withPayloads(row: LogSummaryRow & Pick<Selectable<RequestLogsTable>, (typeof CONTENT_COLUMNS)[number]>): StoredLogRow {
  const { payloads, ...rest } = row;
  if (payloads === null) return rest;
  const unpacked = unpackPayloads(payloads);
  return { ...rest, request_payload: unpacked.request, response_payload: unpacked.response };
}

/** Usage groups in ascending order (days by number, ids by code unit), no key or model last. */
function compareGroups(a: string | number | null, b: string | number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The request log in the database: batch writes, queries, aggregates and retention. */
export class LogStore {
  private readonly db: Kysely<Database>;
  private readonly sqlite: SqliteDatabase.Database | undefined;
  private readonly insert: BatchInsert;
  readonly kind: 'sqlite' | 'postgres';
  /** Bytes a record takes beside its payloads, indexes included, on this database (measured: docs/logging.md). */
  readonly recordOverheadBytes: number;

  /** Queries go through the query builder; batch writes through the driver behind it (sqlite or pg), prepared. */
  constructor(storage: Pick<Storage, 'db' | 'sqlite' | 'pg'>) {
    this.db = storage.db;
    this.sqlite = storage.sqlite;
    this.insert = batchInsert(storage);
    this.kind = storage.sqlite !== undefined ? 'sqlite' : 'postgres';
    this.recordOverheadBytes = this.kind === 'sqlite' ? SQLITE_RECORD_BYTES : POSTGRES_RECORD_BYTES;
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

  /**
   * Newest written first, one page: rows and the cursor of the next page (null on the last).
   * Ordered by write sequence, which only grows: a record written after a page was read is
   * above it (the next poll of the first page shows it), never below the cursor. Records
   * written before the sequence existed follow, by start time.
   */
  async list(
    filter: LogFilter,
    access: LogAccess,
    pageSize: number,
    cursor?: LogCursor,
  ): Promise<{ rows: LogSummaryRow[]; next: LogCursor | null }> {
    const summaries = () => restrict(this.db.selectFrom('request_logs').select(SUMMARY_COLUMNS), filter, access);
    const rows: LogSummaryRow[] = [];
    if (cursor === undefined || 'seq' in cursor) {
      let sequenced = summaries().where('seq', 'is not', null);
      if (cursor !== undefined) sequenced = sequenced.where('seq', '<', cursor.seq);
      rows.push(...(await sequenced.orderBy('seq', 'desc').limit(pageSize + 1).execute()));
    }
    if (rows.length <= pageSize) {
      const legacy = await afterLegacy(summaries(), cursor)
        .orderBy('started_at', 'desc')
        .orderBy('request_id', 'desc')
        .limit(pageSize + 1 - rows.length)
        .execute();
      rows.push(...legacy);
    }
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    return { rows: page, next: rows.length > pageSize && last !== undefined ? cursorOf(last) : null };
  }

  async get(requestId: string, access: LogAccess): Promise<StoredLogRow | undefined> {
    const row = await restrict(this.db.selectFrom('request_logs').select([...SUMMARY_COLUMNS, ...CONTENT_COLUMNS]), {}, access)
      .where('request_id', '=', requestId)
      .executeTakeFirst();
    return row === undefined ? undefined : withPayloads(row);
  }

  /**
   * Every matching row with payloads, in the list's order. Pages of summaries, then the
   * payloads of as many records as fit in EXPORT_BATCH_BYTES as stored, decompressed one
   * record at a time as it is read: memory stays bounded whatever the export's size.
   */
  async *export(filter: LogFilter, access: LogAccess): AsyncGenerator<StoredLogRow> {
    let cursor: LogCursor | undefined;
    do {
      const { rows, next } = await this.list(filter, access, EXPORT_PAGE_SIZE, cursor);
      const sizes = await this.storedSizes(rows.map((row) => row.request_id));
      let batch: LogSummaryRow[] = [];
      let bytes = 0;
      for (const row of rows) {
        const size = sizes.get(row.request_id) ?? 0;
        if (batch.length > 0 && bytes + size > EXPORT_BATCH_BYTES) {
          yield* this.withContents(batch);
          batch = [];
          bytes = 0;
        }
        batch.push(row);
        bytes += size;
      }
      if (batch.length > 0) yield* this.withContents(batch);
      cursor = next ?? undefined;
    } while (cursor !== undefined);
  }

  /** Stored bytes of each record's payloads and detail (read from the row headers, not the values). */
  private async storedSizes(requestIds: readonly string[]): Promise<Map<string, number>> {
    if (requestIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('request_logs')
      .select([
        'request_id',
        sql<number>`coalesce(length(payloads), 0) + coalesce(length(request_payload), 0) + coalesce(length(response_payload), 0) + coalesce(length(detail), 0)`.as(
          'bytes',
        ),
      ])
      .where('request_id', 'in', requestIds)
      .execute();
    return new Map(rows.map((row) => [row.request_id, Number(row.bytes)]));
  }

  private async *withContents(batch: readonly LogSummaryRow[]): AsyncGenerator<StoredLogRow> {
    const contents = await this.db
      .selectFrom('request_logs')
      .select(['request_id', ...CONTENT_COLUMNS])
      .where(
        'request_id',
        'in',
        batch.map((row) => row.request_id),
      )
      .execute();
    const byId = new Map(contents.map((content) => [content.request_id, content]));
    for (const row of batch) {
      const content = byId.get(row.request_id);
      // A record deleted by retention between the two reads is left out.
      if (content !== undefined) yield withPayloads({ ...row, ...content });
    }
  }

  async usage(grouping: UsageGrouping, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
    // Integer division gives the epoch day on both databases (bigint / integer truncates).
    const group: RawBuilder<string | number | null> =
      grouping === 'day'
        ? sql`(started_at / ${sql.lit(DAY_MS)})`
        : grouping === 'model'
          ? sql`coalesce(resolved_model, requested_model)`
          : grouping === 'key'
            ? sql`key_id`
            : sql`project_id`;
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

  /** What the log holds: its counts (no scan) and the bytes the database takes on disk. */
  async size(): Promise<LogStoreSize> {
    const totals = await this.db.selectFrom('request_log_totals').select(['records', 'payload_bytes']).where('id', '=', 1).executeTakeFirstOrThrow();
    let databaseBytes: number;
    if (this.sqlite !== undefined) {
      const pages = this.sqlite.pragma('page_count', { simple: true }) as number;
      databaseBytes = pages * (this.sqlite.pragma('page_size', { simple: true }) as number);
    } else {
      const { rows } = await sql<{ bytes: number }>`select pg_total_relation_size('request_logs') as bytes`.execute(this.db);
      databaseBytes = Number(rows[0]?.bytes ?? 0);
    }
    return { records: Number(totals.records), payloadBytes: Number(totals.payload_bytes), databaseBytes };
  }

  /**
   * Drops the payloads of up to `batchSize` of the oldest records that still have them (the
   * size cap): the records stay, marked `size_cap`. Returns how many. The totals row keeps
   * where the dropped records end, so the next batch does not walk past them again.
   */
  async dropOldestPayloads(batchSize: number): Promise<number> {
    const { payloads_from_seq: from } = await this.db.selectFrom('request_log_totals').select('payloads_from_seq').where('id', '=', 1).executeTakeFirstOrThrow();
    const oldest = await this.db
      .selectFrom('request_logs')
      .select('seq')
      .where('seq', '>=', Number(from))
      .where('payloads', 'is not', null)
      .orderBy('seq')
      .limit(batchSize)
      .execute();
    const last = oldest.at(-1)?.seq;
    if (last === undefined || last === null) return 0;
    const result = await this.db
      .updateTable('request_logs')
      .set({ payloads: null, payloads_omitted: 'size_cap' })
      .where('seq', '>=', Number(from))
      .where('seq', '<=', Number(last))
      .where('payloads', 'is not', null)
      .executeTakeFirst();
    const next = Number(last) + 1;
    // Another instance may have gone further meanwhile: the horizon only moves forward.
    await sql`update request_log_totals set payloads_from_seq = case when payloads_from_seq > ${next} then payloads_from_seq else ${next} end where id = 1`.execute(this.db);
    return Number(result.numUpdatedRows);
  }

  /** Deletes up to `batchSize` of the oldest sequenced records (the size cap, once no payload is left to drop). */
  async deleteOldestRecords(batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('request_logs')
      .where('seq', 'in', (eb) => eb.selectFrom('request_logs').select('seq').where('seq', 'is not', null).orderBy('seq').limit(batchSize))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * SQLite: gives up to `maxPages` free pages back to the file system; returns whether free
   * pages remain. Only a database in incremental auto-vacuum mode can (docs/logging.md);
   * PostgreSQL reuses freed space for new rows instead, and returns false.
   */
  reclaimFreePages(maxPages: number): boolean {
    if (this.sqlite === undefined || !this.reclaimsFreePages()) return false;
    this.sqlite.pragma(`incremental_vacuum(${Math.floor(maxPages)})`);
    return (this.sqlite.pragma('freelist_count', { simple: true }) as number) > 0;
  }

  /** Whether deleted rows' pages go back to the file system (SQLite in incremental auto-vacuum mode). */
  reclaimsFreePages(): boolean {
    return this.sqlite !== undefined && this.sqlite.pragma('auto_vacuum', { simple: true }) === SQLITE_INCREMENTAL_VACUUM;
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
