import { GatewayError } from '../errors/index.js';
import type { LogFilter, UsageGrouping } from './types.js';

/**
 * Turns the query parameters of the log and usage endpoints (and the CLI's flags, which are
 * sent as the same parameters) into filters. A bad value is a 400 that names the parameter
 * and says what to send.
 */

export interface LogQueryParameters {
  key?: string | undefined;
  key_name?: string | undefined;
  model?: string | undefined;
  project?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  status?: string | undefined;
  endpoint?: string | undefined;
  platform?: string | undefined;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const IDENTIFIER = /^[\w.:@/-]{1,200}$/;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_body', `${param} ${message}`, { param });
}

/** Whether the YYYY-MM-DD a time starts with is a day of the calendar: Date.parse reads 2025-02-30 as March 2. */
function isCalendarDate(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An ISO 8601 date or time (UTC unless it says otherwise), or a duration ago such as 15m, 24h, 7d. */
export function parseTime(value: string, param: string, now: number): number {
  const relative = /^(\d{1,6})([smhd])$/.exec(value);
  if (relative !== null) return now - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  if (ISO_TIME.test(value) && isCalendarDate(value)) {
    const withZone = /[T ]\d{2}:\d{2}/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? `${value}Z` : value;
    const time = Date.parse(withZone.replace(' ', 'T'));
    if (!Number.isNaN(time)) return time;
  }
  throw invalid(param, 'must be an ISO 8601 date or time (2025-01-31, 2025-01-31T12:00:00Z) or a duration ago (15m, 24h, 7d).');
}

function parseIdentifier(value: string | undefined, param: string): string | undefined {
  if (value === undefined) return undefined;
  if (!IDENTIFIER.test(value)) throw invalid(param, 'must be 1–200 characters of letters, digits and . _ : @ / -.');
  return value;
}

function parseStatus(value: string | undefined): LogFilter['status'] {
  if (value === undefined) return undefined;
  if (/^[1-5]\d\d$/.test(value)) return { min: Number(value), max: Number(value) };
  if (/^[1-5]xx$/i.test(value)) return { min: Number(value[0]) * 100, max: Number(value[0]) * 100 + 99 };
  if (value === 'success') return { min: 100, max: 399 };
  if (value === 'error') return { min: 400, max: 599 };
  throw invalid('status', 'must be a status code (429), a class (4xx), "success" or "error".');
}

export function parseLogFilter(query: LogQueryParameters, now: number = Date.now()): LogFilter {
  const filter: LogFilter = {};
  const keyId = parseIdentifier(query.key, 'key');
  const model = parseIdentifier(query.model, 'model');
  const projectId = parseIdentifier(query.project, 'project');
  if (keyId !== undefined) filter.keyId = keyId;
  if (query.key_name !== undefined) {
    // A key's name as the admin API takes it: 1-200 characters of any kind.
    if (query.key_name.length < 1 || query.key_name.length > 200) throw invalid('key_name', 'must be a key name of 1–200 characters.');
    filter.keyName = query.key_name;
  }
  if (model !== undefined) filter.model = model;
  if (projectId !== undefined) filter.projectId = projectId;
  const endpoint = parseIdentifier(query.endpoint, 'endpoint');
  const platform = parseIdentifier(query.platform, 'platform');
  if (endpoint !== undefined) filter.endpoint = endpoint;
  if (platform !== undefined) filter.platform = platform;
  if (query.since !== undefined) filter.since = parseTime(query.since, 'since', now);
  if (query.until !== undefined) filter.until = parseTime(query.until, 'until', now);
  if (filter.since !== undefined && filter.until !== undefined && filter.until <= filter.since) {
    throw invalid('until', 'must be later than since.');
  }
  const status = parseStatus(query.status);
  if (status !== undefined) filter.status = status;
  return filter;
}

export function parsePageSize(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  if (!/^\d{1,7}$/.test(value) || Number(value) < 1 || Number(value) > MAX_PAGE_SIZE) {
    throw invalid('limit', `must be a whole number from 1 to ${MAX_PAGE_SIZE}.`);
  }
  return Number(value);
}

/**
 * Where a page ends: the write sequence of its last record, or, among records written before
 * the sequence existed, its start time and request id (the cursor every page had before).
 */
export type LogCursor = { seq: number } | { startedAt: number; requestId: string };

export function encodeCursor(cursor: LogCursor): string {
  const value = 'seq' in cursor ? { seq: cursor.seq } : [cursor.startedAt, cursor.requestId];
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** What a request id may hold (the gateway's are `req_` and hex): the pattern of the record route's parameter too. */
export const REQUEST_ID_PATTERN = '^[\\w-]{1,100}$';
const REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

const isPosition = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function decodeCursor(decoded: unknown): LogCursor | undefined {
  // Only values a page can end at: the databases refuse others differently (or not at all).
  if (Array.isArray(decoded)) {
    const [startedAt, requestId] = decoded as unknown[];
    if (isPosition(startedAt) && typeof requestId === 'string' && REQUEST_ID.test(requestId)) return { startedAt, requestId };
  } else if (typeof decoded === 'object' && decoded !== null && Object.keys(decoded).length === 1 && isPosition((decoded as { seq?: unknown }).seq)) {
    return { seq: (decoded as { seq: number }).seq };
  }
  return undefined;
}

export function parseCursor(value: string | undefined): LogCursor | undefined {
  if (value === undefined) return undefined;
  let cursor: LogCursor | undefined;
  try {
    cursor = decodeCursor(JSON.parse(Buffer.from(value, 'base64url').toString('utf8')));
  } catch {
    // falls through to the 400
  }
  if (cursor !== undefined) return cursor;
  throw invalid('cursor', 'is not a cursor this API returned; pass next_cursor from the previous page unchanged.');
}

/** The groupings of usage, in the order help texts list them. */
export const USAGE_GROUPINGS: readonly UsageGrouping[] = ['day', 'model', 'key', 'project', 'team', 'agent', 'tag', 'end_user'];

export function parseGrouping(value: string | undefined): UsageGrouping {
  if (value === undefined) return 'day';
  if ((USAGE_GROUPINGS as readonly string[]).includes(value)) return value as UsageGrouping;
  throw invalid('by', `must be one of ${USAGE_GROUPINGS.join(', ')}.`);
}

export type ExportFormat = 'jsonl' | 'csv';

export function parseExportFormat(value: string | undefined): ExportFormat {
  if (value === undefined || value === 'jsonl') return 'jsonl';
  if (value === 'csv') return 'csv';
  throw invalid('format', 'must be jsonl (one JSON record per line, in full) or csv (one row per record, without payloads).');
}

/** The two filters the request log's store applies beside its own (endpoint, platform). */
export function whereEndpointAndPlatform<Q extends { where: (column: 'endpoint' | 'platform', operator: '=', value: string) => Q }>(query: Q, filter: LogFilter): Q {
  let filtered = query;
  if (filter.endpoint !== undefined) filtered = filtered.where('endpoint', '=', filter.endpoint);
  if (filter.platform !== undefined) filtered = filtered.where('platform', '=', filter.platform);
  return filtered;
}
