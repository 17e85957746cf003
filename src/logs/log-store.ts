import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { LimitSeed } from '../limits/index.js';
import type { Database, Storage } from '../storage/index.js';
import type { RequestLogRow } from './log-entry.js';
import { exportRecords } from './log-export.js';
import type { LogCursor } from './log-filters.js';
import { logRowInsert, type LogRowInsert, type RefusedLogRow } from './log-insert.js';
import { getRecord, listRecords, type LogPage } from './log-queries.js';
import type { StoredLogRow } from './log-rows.js';
import { keyNamesOf, limitSeedsOf, usageOf, type UsageRow } from './log-usage.js';
import type { LogAccess, LogFilter, UsageGrouping } from './types.js';

/** What the request log holds, from the counts its writes and triggers keep, and the database's own size. */
export interface LogStoreSize {
  /** Records written since the write sequence (older ones are not counted). */
  records: number;
  /** Compressed payload bytes of those records. */
  payloadBytes: number;
  /** Bytes on disk: the SQLite file in use, or PostgreSQL's request_logs with its indexes and TOAST. */
  databaseBytes: number;
}

/** `PRAGMA auto_vacuum` of a database that gives free pages back on `incremental_vacuum`. */
const SQLITE_INCREMENTAL_VACUUM = 2;
/** A record's bytes beside its payloads, indexes included (docs/logging.md, "Size and retention"). */
const SQLITE_RECORD_BYTES = 390;
const POSTGRES_RECORD_BYTES = 550;

/**
 * The request log in the database: queries (log-queries.ts), exports (log-export.ts), usage
 * aggregates (log-usage.ts), and the upkeep of its size: retention, the size cap, free pages.
 * Records are written by the writer's thread through its own connection (log-insert.ts);
 * `insertBatch` writes through this one (the command line, tests).
 */
export class LogStore {
  private readonly db: Kysely<Database>;
  private readonly sqlite: SqliteDatabase.Database | undefined;
  private readonly insert: LogRowInsert;
  readonly kind: 'sqlite' | 'postgres';
  /** Bytes a record takes beside its payloads, indexes included, on this database (measured: docs/logging.md). */
  readonly recordOverheadBytes: number;

  /** Queries go through the query builder; batch writes through the driver behind it (sqlite or pg), prepared. */
  constructor(storage: Pick<Storage, 'db' | 'sqlite' | 'pg'>) {
    this.db = storage.db;
    this.sqlite = storage.sqlite;
    this.insert = logRowInsert(storage);
    this.kind = storage.sqlite !== undefined ? 'sqlite' : 'postgres';
    this.recordOverheadBytes = this.kind === 'sqlite' ? SQLITE_RECORD_BYTES : POSTGRES_RECORD_BYTES;
  }

  /** Writes a batch in one transaction; resolves with the rows the database refused (see logRowInsert). */
  insertBatch(rows: readonly RequestLogRow[]): Promise<RefusedLogRow[]> {
    return this.insert(rows);
  }

  list(filter: LogFilter, access: LogAccess, pageSize: number, cursor?: LogCursor): Promise<LogPage> {
    return listRecords(this.db, filter, access, pageSize, cursor);
  }

  get(requestId: string, access: LogAccess): Promise<StoredLogRow | undefined> {
    return getRecord(this.db, requestId, access);
  }

  export(filter: LogFilter, access: LogAccess): AsyncGenerator<StoredLogRow> {
    return exportRecords(this.db, filter, access);
  }

  usage(grouping: UsageGrouping, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
    return usageOf(this.db, grouping, filter, access);
  }

  /** Key id → the key's name now, for the views that show a key (the list, a record). */
  keyNames(keyIds: readonly string[]): Promise<Map<string, string>> {
    return keyNamesOf(this.db, keyIds);
  }

  /** Tokens of the current UTC day and cost of the current UTC month, per key (limiter seeds). */
  limitSeeds(now: number): Promise<LimitSeed[]> {
    return limitSeedsOf(this.db, now);
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

}
