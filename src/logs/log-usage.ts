import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { LimitSeed } from '../limits/index.js';
import { parseJsonColumn, type Database } from '../storage/index.js';
import { restrict, type LogQuery } from './log-queries.js';
import type { LogAccess, LogFilter, ModelCallRecord, ToolCallRecord, UsageGrouping } from './types.js';

export interface UsageRow {
  /** Epoch day number, model id, key id, project id, team id, agent slug or tag, depending on the grouping. */
  group: string | number | null;
  /** What the group is called where it has a name of its own: a key's name, a team's name. */
  label?: string | null;
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

type Counts = Omit<UsageRow, 'group' | 'label'>;

const DAY_MS = 86_400_000;

/** Usage groups in ascending order (days by number, ids by code unit), no key or model last. */
function compareGroups(a: string | number | null, b: string | number | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function sorted(rows: UsageRow[]): UsageRow[] {
  // Sorted here: the databases order NULL (and, by collation, text) differently.
  return rows.sort((a, b) => compareGroups(a.group, b.group));
}

const ZERO: Counts = { requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, costMicroUsd: 0, unpricedRequests: 0, cacheHits: 0, savedMicroUsd: 0 };

function added(a: Counts, b: Counts): Counts {
  return {
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    costMicroUsd: a.costMicroUsd + b.costMicroUsd,
    unpricedRequests: a.unpricedRequests + b.unpricedRequests,
    cacheHits: a.cacheHits + b.cacheHits,
    savedMicroUsd: a.savedMicroUsd + b.savedMicroUsd,
  };
}

/** Requests, tokens and cost per value of `group` over the matching records. */
async function aggregate(
  db: Kysely<Database>,
  group: RawBuilder<string | number | null>,
  filter: LogFilter,
  access: LogAccess,
  narrow: <O>(query: LogQuery<O>) => LogQuery<O> = (query) => query,
): Promise<UsageRow[]> {
  const rows = await narrow(restrict(db.selectFrom('request_logs'), filter, access))
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

/**
 * Folds rows of one grouping into groups of another: each row counts under every group
 * `groupsOf` gives it (a key with two tags under both), or under null when it gives none.
 */
function folded(rows: readonly UsageRow[], groupsOf: (group: string | number | null) => readonly string[], labelOf: (group: string) => string | null | undefined): UsageRow[] {
  const totals = new Map<string | null, Counts>();
  for (const { group, label: _label, ...counts } of rows) {
    const groups = groupsOf(group);
    for (const target of groups.length === 0 ? [null] : groups) totals.set(target, added(totals.get(target) ?? ZERO, counts));
  }
  return [...totals].map(([group, counts]) => ({ group, ...(group === null ? {} : { label: labelOf(group) ?? null }), ...counts }));
}

/**
 * Usage per model. An agent run names no model of its own: each run counts under every model
 * (and MCP tool) its nodes called, once a model, with those calls' tokens and cost (its record
 * lists them in `detail.calls`); a run that made no call stays in the null group. So the
 * requests over models can exceed the period's requests; its tokens and cost do not.
 */
async function byModel(db: Kysely<Database>, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
  const rows = await aggregate(db, sql`coalesce(nullif(resolved_model, ''), requested_model)`, filter, access, (query) => query.where('agent', 'is', null));
  const totals = new Map<string | null, Counts>(rows.map(({ group, ...counts }) => [group === null ? null : String(group), counts]));
  const add = (group: string | null, counts: Counts) => totals.set(group, added(totals.get(group) ?? ZERO, counts));
  const runs = await restrict(db.selectFrom('request_logs'), filter, access)
    .where('agent', 'is not', null)
    .select(['status', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_micro_usd', 'cache_status', 'cache_saved_micro_usd', 'detail'])
    .execute();
  for (const run of runs) {
    const failed = run.status >= 400 ? 1 : 0;
    const calls = parseJsonColumn<{ calls?: (ModelCallRecord | ToolCallRecord)[] }>(run.detail)?.calls ?? [];
    if (calls.length === 0) {
      add(null, {
        ...ZERO,
        requests: 1,
        errors: failed,
        promptTokens: run.prompt_tokens ?? 0,
        completionTokens: run.completion_tokens ?? 0,
        totalTokens: run.total_tokens ?? 0,
        costMicroUsd: run.cost_micro_usd ?? 0,
        unpricedRequests: run.cost_micro_usd === null && (run.status < 400 || run.status === 499) ? 1 : 0,
        cacheHits: run.cache_status === 'hit' ? 1 : 0,
        savedMicroUsd: run.cache_saved_micro_usd ?? 0,
      });
      continue;
    }
    const perModel = new Map<string, Counts>();
    for (const call of calls) {
      const usage = call.usage;
      const priced = call.costMicroUsd !== null || call.purpose === 'tool' || call.outcome !== 'ok';
      const previous = perModel.get(call.model);
      perModel.set(call.model, {
        ...(previous ?? { ...ZERO, requests: 1, errors: failed }),
        promptTokens: (previous?.promptTokens ?? 0) + (usage?.promptTokens ?? 0),
        completionTokens: (previous?.completionTokens ?? 0) + (usage?.completionTokens ?? 0),
        totalTokens: (previous?.totalTokens ?? 0) + (usage?.totalTokens ?? 0),
        costMicroUsd: (previous?.costMicroUsd ?? 0) + (call.costMicroUsd ?? 0),
        unpricedRequests: (previous?.unpricedRequests ?? 0) || (priced ? 0 : 1),
      });
    }
    for (const [model, counts] of perModel) add(model, counts);
  }
  return [...totals].map(([group, counts]) => ({ group, ...counts }));
}

/** The names of these keys now (records keep a key's id; a name changes). */
export async function keyNamesOf(db: Kysely<Database>, keyIds: readonly string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const chunk of chunks([...new Set(keyIds)])) {
    for (const key of await db.selectFrom('api_keys').select(['id', 'name']).where('id', 'in', chunk).execute()) names.set(key.id, key.name);
  }
  return names;
}

/** Usage per key with the keys' names (a deleted key's records keep its id, without a name). */
async function byKey(db: Kysely<Database>, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
  const rows = await aggregate(db, sql`coalesce(key_id, null)`, filter, access);
  const names = await keyNamesOf(db, rows.flatMap((row) => (row.group === null ? [] : [String(row.group)])));
  return rows.map((row) => (row.group === null ? row : { ...row, label: names.get(String(row.group)) ?? null }));
}

/**
 * Usage per team: per project, each project counted under the team it belongs to now (a moved
 * project's earlier records move with it). Records without a project are the null group.
 */
async function byTeam(db: Kysely<Database>, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
  const rows = await aggregate(db, sql`coalesce(project_id, null)`, filter, access);
  const projects = await db.selectFrom('projects').select(['id', 'team_id']).execute();
  const teamOf = new Map(projects.map((project) => [project.id, project.team_id]));
  const teams = new Map((await db.selectFrom('teams').select(['id', 'name']).execute()).map((team) => [team.id, team.name]));
  return folded(rows, (project) => {
    const team = project === null ? undefined : teamOf.get(String(project));
    return team === undefined ? [] : [team];
  }, (team) => teams.get(team));
}

/** Usage per tag of the keys (their tags now): a key with two tags counts under both; keys without any, and keyless records, are the null group. */
async function byTag(db: Kysely<Database>, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
  const rows = await aggregate(db, sql`coalesce(key_id, null)`, filter, access);
  const ids = rows.flatMap((row) => (row.group === null ? [] : [String(row.group)]));
  const tags = new Map<string, string[]>();
  for (const chunk of chunks(ids)) {
    for (const key of await db.selectFrom('api_keys').select(['id', 'tags']).where('id', 'in', chunk).execute()) {
      tags.set(key.id, key.tags === null ? [] : (JSON.parse(key.tags) as string[]));
    }
  }
  return folded(rows, (key) => (key === null ? [] : (tags.get(String(key)) ?? [])), () => undefined).map(({ label: _label, ...row }) => row);
}

/** Ids in lists a query's parameters hold on every database (SQLite allows 32,766 a statement). */
function chunks(ids: readonly string[], size = 500): string[][] {
  const out: string[][] = [];
  for (let index = 0; index < ids.length; index += size) out.push(ids.slice(index, index + size));
  return out;
}

/** Requests, tokens and cost per group of the matching records. */
export async function usageOf(db: Kysely<Database>, grouping: UsageGrouping, filter: LogFilter, access: LogAccess): Promise<UsageRow[]> {
  // Integer division gives the epoch day on both databases (bigint / integer truncates). Every
  // group is an expression, not a bare column: SQLite would otherwise walk a whole (column, seq)
  // index to group without sorting, rather than search the start-time index for a time range.
  switch (grouping) {
    case 'day':
      return sorted(await aggregate(db, sql`(started_at / ${sql.lit(DAY_MS)})`, filter, access));
    case 'model':
      return sorted(await byModel(db, filter, access));
    case 'key':
      return sorted(await byKey(db, filter, access));
    case 'project':
      return sorted(await aggregate(db, sql`coalesce(project_id, null)`, filter, access));
    case 'team':
      return sorted(await byTeam(db, filter, access));
    case 'agent':
      return sorted(await aggregate(db, sql`coalesce(agent, null)`, filter, access));
    case 'tag':
      return sorted(await byTag(db, filter, access));
    case 'end_user':
      return sorted(await aggregate(db, sql`coalesce(end_user, null)`, filter, access));
  }
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
