import type { Kysely } from 'kysely';
import type { Database } from '../storage/index.js';
import { restoredRequestId, restoredResolvedModel } from './log-rows.js';

/**
 * Recent calls per provider and over time, read from the request log: what the health page,
 * `modelgate status` and the overview show. The rows of the window are read once, newest first,
 * on the started_at index, and counted here (percentiles need the latencies themselves).
 */

/** The most rows one summary reads: a busy gateway's summary is of its newest calls. */
const MAX_ROWS = 20_000;
/** How many of a provider's last failures are shown. */
const LAST_FAILURES = 5;

export interface RecentFailure {
  request_id: string;
  at: string;
  status: number;
  error_code: string | null;
  model: string | null;
}

export interface ProviderRecentView {
  provider: string;
  requests: number;
  errors: number;
  /** errors / requests; null without requests. */
  error_rate: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  last_failures: RecentFailure[];
}

export interface OverviewBucket {
  start: string;
  requests: number;
  errors: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  cost_usd: number;
}

export interface OverviewView {
  since: string;
  bucket_minutes: number;
  /** True when the window had more calls than one summary reads: the figures are of the newest. */
  truncated: boolean;
  totals: { requests: number; errors: number; cost_usd: number; latency_p50_ms: number | null; latency_p95_ms: number | null };
  buckets: OverviewBucket[];
  top_models: { model: string; requests: number; cost_usd: number }[];
  top_keys: { key_id: string; name: string | null; requests: number; cost_usd: number }[];
  /** Teams by spend, through the team each call's project belongs to now. */
  top_teams: { team_id: string; name: string | null; requests: number; cost_usd: number }[];
  /** End users by spend, as the request log names them (hashed when their project hashes them). */
  top_end_users: { end_user: string; requests: number; cost_usd: number }[];
}

/** The nearest-rank percentile of ascending values. */
function percentile(sorted: readonly number[], share: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

const isError = (status: number) => status >= 500 || status === 429 || status === 408;
const usd = (micro: number) => Math.round(micro) / 1_000_000;

/** Calls of each provider since `since` (ms): counts, error rate, latency percentiles, the last failures with their request ids. */
export async function recentProviderCalls(db: Kysely<Database>, since: number): Promise<ProviderRecentView[]> {
  const rows = await db
    .selectFrom('request_logs')
    .select(['provider', 'status', 'latency_ms', 'request_id', 'error_code', 'requested_model', 'resolved_model', 'started_at'])
    .where('started_at', '>=', since)
    .where('provider', 'is not', null)
    .orderBy('started_at', 'desc')
    .limit(MAX_ROWS)
    .execute();
  const byProvider = new Map<string, typeof rows>();
  for (const row of rows) {
    const list = byProvider.get(row.provider!) ?? [];
    list.push(row);
    byProvider.set(row.provider!, list);
  }
  return [...byProvider].map(([provider, calls]) => {
    const latencies = calls.map((call) => Number(call.latency_ms)).sort((a, b) => a - b);
    const failures = calls.filter((call) => isError(call.status));
    return {
      provider,
      requests: calls.length,
      errors: failures.length,
      error_rate: calls.length === 0 ? null : failures.length / calls.length,
      latency_p50_ms: percentile(latencies, 0.5),
      latency_p95_ms: percentile(latencies, 0.95),
      last_failures: failures.slice(0, LAST_FAILURES).map((call) => ({
        request_id: restoredRequestId(call.request_id),
        at: new Date(Number(call.started_at)).toISOString(),
        status: call.status,
        error_code: call.error_code,
        model: restoredResolvedModel(call.requested_model, call.resolved_model),
      })),
    };
  });
}

/** Requests, errors, latency and spend since `since` in buckets of `bucketMinutes`, and the top models, keys (by name), teams and end users. */
export async function overviewOf(db: Kysely<Database>, since: number, bucketMinutes: number, now: number = Date.now()): Promise<OverviewView> {
  const rows = await db
    .selectFrom('request_logs')
    .leftJoin('api_keys', 'api_keys.id', 'request_logs.key_id')
    .leftJoin('projects', 'projects.id', 'request_logs.project_id')
    .leftJoin('teams', 'teams.id', 'projects.team_id')
    .select([
      'request_logs.status',
      'request_logs.latency_ms',
      'request_logs.cost_micro_usd',
      'request_logs.requested_model',
      'request_logs.resolved_model',
      'request_logs.key_id',
      'request_logs.started_at',
      'request_logs.end_user',
      'api_keys.name as key_name',
      'projects.team_id as team_id',
      'teams.name as team_name',
    ])
    .where('request_logs.started_at', '>=', since)
    .orderBy('request_logs.started_at', 'desc')
    .limit(MAX_ROWS)
    .execute();
  const bucketMs = bucketMinutes * 60_000;
  const first = Math.floor(since / bucketMs) * bucketMs;
  const count = Math.max(1, Math.ceil((now - first) / bucketMs));
  const buckets = Array.from({ length: count }, (_, index) => ({ start: first + index * bucketMs, requests: 0, errors: 0, cost: 0, latencies: [] as number[] }));
  const models = new Map<string, { requests: number; cost: number }>();
  const keys = new Map<string, { name: string | null; requests: number; cost: number }>();
  const teams = new Map<string, { name: string | null; requests: number; cost: number }>();
  const endUsers = new Map<string, { requests: number; cost: number }>();
  const all: number[] = [];
  let errors = 0;
  let cost = 0;
  for (const row of rows) {
    const bucket = buckets[Math.min(count - 1, Math.max(0, Math.floor((Number(row.started_at) - first) / bucketMs)))]!;
    const latency = Number(row.latency_ms);
    const spent = Number(row.cost_micro_usd ?? 0);
    bucket.requests += 1;
    bucket.cost += spent;
    bucket.latencies.push(latency);
    all.push(latency);
    cost += spent;
    if (isError(row.status)) {
      bucket.errors += 1;
      errors += 1;
    }
    const resolvedModel = restoredResolvedModel(row.requested_model, row.resolved_model);
    if (resolvedModel !== null) {
      const model = models.get(resolvedModel) ?? { requests: 0, cost: 0 };
      model.requests += 1;
      model.cost += spent;
      models.set(resolvedModel, model);
    }
    if (row.key_id !== null) {
      const key = keys.get(row.key_id) ?? { name: row.key_name ?? null, requests: 0, cost: 0 };
      key.requests += 1;
      key.cost += spent;
      keys.set(row.key_id, key);
    }
    if (row.team_id !== null) {
      const team = teams.get(row.team_id) ?? { name: row.team_name ?? null, requests: 0, cost: 0 };
      team.requests += 1;
      team.cost += spent;
      teams.set(row.team_id, team);
    }
    if (row.end_user !== null) {
      const endUser = endUsers.get(row.end_user) ?? { requests: 0, cost: 0 };
      endUser.requests += 1;
      endUser.cost += spent;
      endUsers.set(row.end_user, endUser);
    }
  }
  all.sort((a, b) => a - b);
  const top = <T extends { requests: number; cost: number }>(map: Map<string, T>) => [...map].sort((a, b) => b[1].cost - a[1].cost || b[1].requests - a[1].requests).slice(0, 5);
  return {
    since: new Date(since).toISOString(),
    bucket_minutes: bucketMinutes,
    truncated: rows.length === MAX_ROWS,
    totals: { requests: rows.length, errors, cost_usd: usd(cost), latency_p50_ms: percentile(all, 0.5), latency_p95_ms: percentile(all, 0.95) },
    buckets: buckets.map((bucket) => {
      const sorted = bucket.latencies.sort((a, b) => a - b);
      return { start: new Date(bucket.start).toISOString(), requests: bucket.requests, errors: bucket.errors, latency_p50_ms: percentile(sorted, 0.5), latency_p95_ms: percentile(sorted, 0.95), cost_usd: usd(bucket.cost) };
    }),
    top_models: top(models).map(([model, value]) => ({ model, requests: value.requests, cost_usd: usd(value.cost) })),
    top_keys: top(keys).map(([keyId, value]) => ({ key_id: keyId, name: value.name, requests: value.requests, cost_usd: usd(value.cost) })),
    top_teams: top(teams).map(([teamId, value]) => ({ team_id: teamId, name: value.name, requests: value.requests, cost_usd: usd(value.cost) })),
    top_end_users: top(endUsers).map(([endUser, value]) => ({ end_user: endUser, requests: value.requests, cost_usd: usd(value.cost) })),
  };
}
