import { microToUsd } from '../limits/index.js';
import { parseJsonColumn } from '../storage/index.js';
import type { LogSummaryRow, StoredLogRow } from './log-rows.js';
import type { UsageRow } from './log-usage.js';
import type { UsageGrouping } from './types.js';

/** The columns a view shows as they are stored (their types are the table's). */
type ShownAsStored =
  | 'request_id' | 'endpoint' | 'mode' | 'platform' | 'key_id' | 'project_id' | 'fingerprint' | 'requested_model' | 'resolved_model' | 'provider'
  | 'status' | 'error_code' | 'latency_ms' | 'upstream_latency_ms' | 'image_count' | 'audio_seconds' | 'provider_request_id' | 'agent' | 'end_user';

/** A log record as the admin API and the CLI show it (list pages). */
export interface LogSummaryView extends Pick<LogSummaryRow, ShownAsStored> {
  /** The key's name now (the admin API's list and record); null without a key, or one deleted since. */
  key_name?: string | null;
  created_at: string;
  streaming: boolean;
  usage: { prompt_tokens: number | null; completion_tokens: number | null; cached_tokens: number | null; total_tokens: number | null } | null;
  /** USD, exact to the micro-dollar; null when the model has no pricing. */
  cost_usd: number | null;
  cost_is_starting_price: boolean;
  media: unknown;
  /** `hit`, `miss` or `bypass` where a response-cache policy applied (docs/caching.md); null otherwise. */
  cache: 'hit' | 'miss' | 'bypass' | null;
}

/** One record in full (GET /admin/v1/logs/:id and exports): payloads and the upstream detail too. */
export interface LogDetailView extends LogSummaryView {
  request_payload: unknown;
  response_payload: unknown;
  /** Why the payloads are missing although payload logging was on: `queue_bytes` (shed while the log queue was full), `size_cap` (dropped by the log's size cap). */
  payloads_omitted: string | null;
  detail: Record<string, unknown> | null;
}

export function toSummaryView(row: LogSummaryRow): LogSummaryView {
  const hasUsage = row.prompt_tokens !== null || row.completion_tokens !== null || row.total_tokens !== null;
  return {
    request_id: row.request_id,
    created_at: new Date(row.started_at).toISOString(),
    endpoint: row.endpoint,
    mode: row.mode,
    platform: row.platform,
    key_id: row.key_id,
    project_id: row.project_id,
    fingerprint: row.fingerprint,
    requested_model: row.requested_model,
    resolved_model: row.resolved_model,
    provider: row.provider,
    provider_request_id: row.provider_request_id,
    agent: row.agent,
    end_user: row.end_user ?? null,
    status: row.status,
    error_code: row.error_code,
    latency_ms: row.latency_ms,
    upstream_latency_ms: row.upstream_latency_ms,
    streaming: row.streaming === 1,
    usage: hasUsage
      ? {
          prompt_tokens: row.prompt_tokens,
          completion_tokens: row.completion_tokens,
          cached_tokens: row.cached_tokens,
          total_tokens: row.total_tokens,
        }
      : null,
    image_count: row.image_count,
    audio_seconds: row.audio_seconds,
    cost_usd: row.cost_micro_usd === null ? null : microToUsd(row.cost_micro_usd),
    cost_is_starting_price: row.cost_flag === 'starting_price',
    media: parseJsonColumn(row.media),
    cache: (row.cache_status as LogSummaryView['cache'] | null) ?? null,
  };
}

export function toDetailView(row: StoredLogRow): LogDetailView {
  return {
    ...toSummaryView(row),
    request_payload: parseJsonColumn(row.request_payload),
    response_payload: parseJsonColumn(row.response_payload),
    payloads_omitted: row.payloads_omitted,
    detail: parseJsonColumn<Record<string, unknown>>(row.detail),
  };
}

export interface UsageView {
  day?: string;
  model?: string | null;
  key_id?: string | null;
  /** by=key: the key's name (null for a key deleted since, or no key). */
  key_name?: string | null;
  project_id?: string | null;
  /** by=team: the team the record's project belongs to now, and its name. */
  team_id?: string | null;
  team_name?: string | null;
  /** by=agent: the agent a run belongs to; null for requests that are not agent runs. */
  agent?: string | null;
  /** by=tag: a tag of the record's key; a key with two tags counts under both (totals over tags can exceed the sum). */
  tag?: string | null;
  end_user?: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** Answered requests without a price (models without pricing): not in cost_usd. */
  unpriced_requests: number;
  /** Requests answered from the response cache, and what their answers had cost when they were made (docs/caching.md). */
  cache_hits: number;
  saved_usd: number;
}

const DAY_MS = 86_400_000;

export function toUsageView(grouping: UsageGrouping, row: UsageRow): UsageView {
  const id = row.group === null ? null : String(row.group);
  const group =
    grouping === 'day'
      ? { day: new Date(Number(row.group) * DAY_MS).toISOString().slice(0, 10) }
      : grouping === 'model'
        ? { model: id }
        : grouping === 'key'
          ? { key_id: id, key_name: row.label ?? null }
          : grouping === 'project'
            ? { project_id: id }
            : grouping === 'team'
              ? { team_id: id, team_name: row.label ?? null }
              : grouping === 'agent'
                ? { agent: id }
                : grouping === 'end_user'
                  ? { end_user: id }
                  : { tag: id };
  return {
    ...group,
    requests: row.requests,
    errors: row.errors,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    total_tokens: row.totalTokens,
    cost_usd: microToUsd(row.costMicroUsd),
    unpriced_requests: row.unpricedRequests,
    cache_hits: row.cacheHits,
    saved_usd: microToUsd(row.savedMicroUsd),
  };
}
