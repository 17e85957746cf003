import { sql, type Kysely } from 'kysely';
import type { Database } from '../storage/index.js';
import type { LogCursor } from './log-filters.js';
import { listRecords } from './log-queries.js';
import { CONTENT_COLUMNS, restoredRequestId, storedRequestIdForms, withPayloads, type LogSummaryRow, type StoredLogRow } from './log-rows.js';
import type { LogAccess, LogFilter } from './types.js';

/** Records an export lists per query (without their payloads: small). */
const EXPORT_PAGE_SIZE = 500;
/** Stored bytes of the records whose payloads an export reads in one query: what it holds in memory at most (plus one record). */
export const EXPORT_BATCH_BYTES = 1024 * 1024;

/**
 * Every matching row with payloads, in the list's order. Pages of summaries, then the
 * payloads of as many records as fit in EXPORT_BATCH_BYTES as stored, decompressed one
 * record at a time as it is read: memory stays bounded whatever the export's size.
 */
export async function* exportRecords(db: Kysely<Database>, filter: LogFilter, access: LogAccess): AsyncGenerator<StoredLogRow> {
  let cursor: LogCursor | undefined;
  do {
    const { rows, next } = await listRecords(db, filter, access, EXPORT_PAGE_SIZE, cursor);
    const sizes = await storedSizes(db, rows.map((row) => row.request_id));
    let batch: LogSummaryRow[] = [];
    let bytes = 0;
    for (const row of rows) {
      const size = sizes.get(row.request_id) ?? 0;
      if (batch.length > 0 && bytes + size > EXPORT_BATCH_BYTES) {
        yield* withContents(db, batch);
        batch = [];
        bytes = 0;
      }
      batch.push(row);
      bytes += size;
    }
    if (batch.length > 0) yield* withContents(db, batch);
    cursor = next ?? undefined;
  } while (cursor !== undefined);
}

/** Stored bytes of each record's payloads and detail (read from the row headers, not the values). */
async function storedSizes(db: Kysely<Database>, requestIds: readonly string[]): Promise<Map<string, number>> {
  if (requestIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('request_logs')
    .select([
      'request_id',
      sql<number>`coalesce(length(payloads), 0) + coalesce(length(request_payload), 0) + coalesce(length(response_payload), 0) + coalesce(length(detail), 0)`.as(
        'bytes',
      ),
    ])
    .where('request_id', 'in', requestIds.flatMap(storedRequestIdForms))
    .execute();
  return new Map(rows.map((row) => [restoredRequestId(row.request_id), Number(row.bytes)]));
}

async function* withContents(db: Kysely<Database>, batch: readonly LogSummaryRow[]): AsyncGenerator<StoredLogRow> {
  const contents = await db
    .selectFrom('request_logs')
    .select(['request_id', ...CONTENT_COLUMNS])
    .where(
      'request_id',
      'in',
      batch.flatMap((row) => storedRequestIdForms(row.request_id)),
    )
    .execute();
  const byId = new Map(contents.map(({ request_id, ...content }) => [restoredRequestId(request_id), content]));
  for (const row of batch) {
    const content = byId.get(row.request_id);
    // A record deleted by retention between the two reads is left out.
    if (content !== undefined) yield withPayloads({ ...row, ...content });
  }
}
