import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { LimitSeed } from '../limits/index.js';
import type { Database } from '../storage/index.js';
import { restrict } from './log-queries.js';
import type { LogAccess, LogFilter, UsageGrouping } from './types.js';

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
  /** Requests answered from the response cache, and the cost their answers had when made. */
  cacheHits: number;
  savedMicroUsd: number;
}

const DAY_MS = 86_400_000;

/** Usage groups in ascending order (days by number, ids by code unit), no key or model last. */
function compareGroups(a: string | number | null, b: string | number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Requests, tokens and cost per group of the matching records. */
export async function usageOf(db: Kysely<Database>, grouping: UsageGrouping, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
  // Integer division gives the epoch day on both databases (bigint / integer truncates). Every
  // group is an expression, not a bare column: SQLite would otherwise walk a whole (column, seq)
  // index to group without sorting, rather than search the start-time index for a time range.
  const group: RawBuilder<string | number | null> =
    grouping === 'day'
      ? sql`(started_at / ${sql.lit(DAY_MS)})`
      : grouping === 'model'
        ? sql`coalesce(resolved_model, requested_model)`
        : grouping === 'key'
          ? sql`coalesce(key_id, null)`
          : grouping === 'end_user'
            ? sql`coalesce(end_user, null)`
            : sql`coalesce(project_id, null)`;
  const rows = await restrict(db.selectFrom('request_logs'), filter, access)
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
      sql<number>`sum(case when cache_status = 'hit' then 1 else 0 end)`.as('cache_hits'),
      sql<number | null>`sum(cache_saved_micro_usd)`.as('saved_micro_usd'),
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
    cacheHits: Number(row.cache_hits ?? 0),
    savedMicroUsd: Number(row.saved_micro_usd ?? 0),
  }));
}

/** Tokens of the current UTC day and cost of the current UTC month, per key (limiter seeds). */
export async function limitSeedsOf(db: Kysely<Database>, now: number): Promise<LimitSeed[]> {
  const date = new Date(now);
  const dayStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const rows = await db
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
