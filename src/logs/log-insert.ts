import type SqliteDatabase from 'better-sqlite3';
import type { Pool as PgPool } from 'pg';
import type { Storage } from '../storage/index.js';
import { breaksConnection } from '../storage/index.js';
import type { RequestLogRow } from './log-entry.js';
import { storedFingerprint, storedRequestId, storedResolvedModel, SUMMARY_COLUMNS } from './log-rows.js';
import { packPayloads } from './payload-codec.js';

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
    storedRequestId(row.request_id),
    seq,
    row.started_at,
    row.endpoint,
    row.mode ?? null,
    row.platform ?? null,
    row.key_id ?? null,
    row.project_id ?? null,
    storedFingerprint(row.key_id ?? null, row.fingerprint ?? null),
    row.requested_model ?? null,
    storedResolvedModel(row.requested_model ?? null, row.resolved_model ?? null),
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
    row.cache_status ?? null,
    row.cache_saved_micro_usd ?? null,
    row.end_user ?? null,
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
      const skipped = packed.filter(({ row }) => !inserted.has(storedRequestId(row.request_id)));
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
/** Writes batches of rows, each in one transaction; resolves with the rows the database refused. */
export type LogRowInsert = (rows: readonly RequestLogRow[]) => Promise<RefusedLogRow[]>;

/**
 * The request log's batch write on `storage`'s own connection. A record written twice keeps
 * its first row. When the database refuses a row's data (a value its column cannot hold),
 * the batch is written again a row at a time and the refused rows are returned, left out:
 * retrying a batch that holds such a row would hold back every later record. Any other
 * failure is thrown, the batch unwritten, for the writer to retry.
 */
export function logRowInsert(storage: Pick<Storage, 'sqlite' | 'pg'>): LogRowInsert {
  const insert = batchInsert(storage);
  return async (rows) => {
    if (rows.length === 0) return [];
    try {
      await insert(rows);
      return [];
    } catch (error) {
      if (!refusesData(error)) throw error;
    }
    const refused: RefusedLogRow[] = [];
    for (const row of rows) {
      try {
        await insert([row]);
      } catch (error) {
        if (!refusesData(error)) throw error;
        refused.push({ requestId: row.request_id, reason: (error as Error).message.slice(0, 300) });
      }
    }
    return refused;
  };
}
