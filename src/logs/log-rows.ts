import type { Selectable } from 'kysely';
import type { RequestLogsTable } from '../storage/index.js';
import { unpackPayloads } from './payload-codec.js';

/** What list pages carry: a record without its payloads and detail. */
export type LogSummaryRow = Omit<Selectable<RequestLogsTable>, 'request_payload' | 'response_payload' | 'detail' | 'payloads' | 'payloads_omitted'>;
/** A record in full, its payloads decompressed (the JSON texts as they were written). */
export type StoredLogRow = LogSummaryRow & Pick<Selectable<RequestLogsTable>, 'request_payload' | 'response_payload' | 'detail' | 'payloads_omitted'>;

/** What follows a key's id in its fingerprint (see fingerprintOf); a full fingerprint never starts with it. */
const AFTER_KEY_ID = '…';

/**
 * A fingerprint as stored beside its key id: only what follows the id, since the id is in the
 * record already. One without a key id (`anonymous`) is stored whole.
 */
export function storedFingerprint(keyId: string | null, fingerprint: string | null): string | null {
  if (keyId === null || fingerprint === null || !fingerprint.startsWith(`${keyId}${AFTER_KEY_ID}`)) return fingerprint;
  return fingerprint.slice(keyId.length);
}

/** The whole fingerprint of a stored one (records written before stored it whole). */
function restoredFingerprint(keyId: string | null, stored: string | null): string | null {
  return keyId !== null && stored !== null && stored.startsWith(AFTER_KEY_ID) ? `${keyId}${stored}` : stored;
}

/**
 * The resolved model as stored: empty when it is the requested one, which most records are
 * (null stays null: the call never resolved a model). Its index holds only the others
 * (migration 0063), so a model filter finds the rest through the requested model.
 */
export function storedResolvedModel(requested: string | null, resolved: string | null): string | null {
  return resolved !== null && resolved === requested ? '' : resolved;
}

/** The resolved model of a stored one. */
export function restoredResolvedModel(requested: string | null, stored: string | null): string | null {
  return stored === '' ? requested : stored;
}

/** What every request id the gateway makes starts with (server/app.ts). */
const REQUEST_ID_PREFIX = 'req_';
/** Starts a stored id kept whole: never in an id (log-filters' REQUEST_ID_PATTERN), never a hex digit. */
const WHOLE_ID = '=';

/**
 * A request id as stored: without its `req_`, in the table and in its primary-key index. An
 * id of another shape is stored whole behind `=`. Records written before stored every id
 * whole, and those all start with `req_`, so each stored form reads back one way.
 */
export function storedRequestId(id: string): string {
  const rest = id.slice(REQUEST_ID_PREFIX.length);
  return id.startsWith(REQUEST_ID_PREFIX) && !rest.startsWith(REQUEST_ID_PREFIX) && !rest.startsWith(WHOLE_ID) ? rest : `${WHOLE_ID}${id}`;
}

/** The request id of a stored one. */
export function restoredRequestId(stored: string): string {
  if (stored.startsWith(WHOLE_ID)) return stored.slice(WHOLE_ID.length);
  return stored.startsWith(REQUEST_ID_PREFIX) ? stored : `${REQUEST_ID_PREFIX}${stored}`;
}

/** The stored values a request id may have: its own, and for a gateway id the whole id records written before stored. */
export function storedRequestIdForms(id: string): string[] {
  return id.startsWith(REQUEST_ID_PREFIX) ? [storedRequestId(id), id] : [storedRequestId(id)];
}

type CompactedColumns = Pick<LogSummaryRow, 'request_id' | 'key_id' | 'fingerprint' | 'requested_model' | 'resolved_model'>;

/** A row as read, with the columns stored compacted (see storedRequestId, storedFingerprint, storedResolvedModel) whole again. */
export function restoredRow<R extends CompactedColumns>(row: R): R {
  return {
    ...row,
    request_id: restoredRequestId(row.request_id),
    fingerprint: restoredFingerprint(row.key_id, row.fingerprint),
    resolved_model: restoredResolvedModel(row.requested_model, row.resolved_model),
  };
}

/** The columns of a list page, in the order the insert binds them. */
export const SUMMARY_COLUMNS = [
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
  'cache_status',
  'cache_saved_micro_usd',
  'end_user',
] as const;

/** The columns of a record in full beyond its summary. */
export const CONTENT_COLUMNS = ['payloads', 'request_payload', 'response_payload', 'payloads_omitted', 'detail'] as const;

/** A record with its payloads as JSON text: decompressed, or as written before payloads were compressed. */
export function withPayloads(row: LogSummaryRow & Pick<Selectable<RequestLogsTable>, (typeof CONTENT_COLUMNS)[number]>): StoredLogRow {
  const { payloads, ...rest } = row;
  if (payloads === null) return rest;
  const unpacked = unpackPayloads(payloads);
  return { ...rest, request_payload: unpacked.request, response_payload: unpacked.response };
}
