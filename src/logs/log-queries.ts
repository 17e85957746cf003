import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../storage/index.js';
import { whereEndpointAndPlatform, type LogCursor } from './log-filters.js';
import { CONTENT_COLUMNS, restoredRow, storedRequestIdForms, SUMMARY_COLUMNS, withPayloads, type LogSummaryRow, type StoredLogRow } from './log-rows.js';
import type { LogAccess, LogFilter } from './types.js';

export type LogQuery<O> = SelectQueryBuilder<Database, 'request_logs', O>;


/**
 * Filters plus the caller's access. The access condition is always applied and AND-ed with
 * the filters, so no filter value can widen a project-scoped caller's view.
 */
export function restrict<O>(query: LogQuery<O>, filter: LogFilter, access: LogAccess): LogQuery<O> {
  let restricted = query;
  if (access.projectId !== null) restricted = restricted.where('project_id', '=', access.projectId);
  if (access.projectIds !== undefined) {
    const ids = access.projectIds;
    restricted = ids.length === 0 ? restricted.where(sql<boolean>`1 = 0`) : restricted.where('project_id', 'in', ids);
  }
  if (filter.projectId !== undefined) restricted = restricted.where('project_id', '=', filter.projectId);
  if (filter.keyId !== undefined) restricted = restricted.where('key_id', '=', filter.keyId);
  const keyName = filter.keyName;
  if (keyName !== undefined) restricted = restricted.where('key_id', 'in', (eb) => eb.selectFrom('api_keys').select('api_keys.id').where('api_keys.name', '=', keyName));
  const model = filter.model;
  if (model !== undefined) {
    // A record whose resolved model is the requested one stores it empty, and the resolved
    // model's index holds only the others (migration 0063): its condition, written as it is
    // there, tells SQLite's planner it may read it.
    restricted = restricted.where((eb) => eb.or([eb('requested_model', '=', model), eb.and([eb('resolved_model', '=', model), sql<boolean>`resolved_model <> ''`])]));
  }
  if (filter.since !== undefined) restricted = restricted.where('started_at', '>=', filter.since);
  if (filter.until !== undefined) restricted = restricted.where('started_at', '<', filter.until);
  if (filter.status !== undefined) {
    // The status index holds statuses of 400 and up (migration 0063): both planners see from the
    // range itself that an error filter may read it.
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

/** One page of the list: its rows, and the cursor of the next page (null on the last). */
export interface LogPage {
  rows: LogSummaryRow[];
  next: LogCursor | null;
}

/**
 * Newest written first, one page. Ordered by write sequence, which only grows: a record
 * written after a page was read is above it (the next poll of the first page shows it),
 * never below the cursor. Records written before the sequence existed follow, by start time.
 */
export async function listRecords(db: Kysely<Database>, filter: LogFilter, access: LogAccess, pageSize: number, cursor?: LogCursor): Promise<LogPage> {
  const summaries = () => restrict(db.selectFrom('request_logs').select(SUMMARY_COLUMNS), filter, access);
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
  // The cursor holds the id as stored: the legacy order compares stored values.
  const last = page[page.length - 1];
  return { rows: page.map(restoredRow), next: rows.length > pageSize && last !== undefined ? cursorOf(last) : null };
}

/** One record in full, if the caller may see it. */
export async function getRecord(db: Kysely<Database>, requestId: string, access: LogAccess): Promise<StoredLogRow | undefined> {
  const row = await restrict(db.selectFrom('request_logs').select([...SUMMARY_COLUMNS, ...CONTENT_COLUMNS]), {}, access)
    .where('request_id', 'in', storedRequestIdForms(requestId))
    .executeTakeFirst();
  return row === undefined ? undefined : withPayloads(restoredRow(row));
}
