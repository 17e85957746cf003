import type { Selectable } from 'kysely';
import type { RequestLogsTable } from '../storage/index.js';
import { unpackPayloads } from './payload-codec.js';

/** What list pages carry: a record without its payloads and detail. */
export type LogSummaryRow = Omit<Selectable<RequestLogsTable>, 'request_payload' | 'response_payload' | 'detail' | 'payloads' | 'payloads_omitted'>;
/** A record in full, its payloads decompressed (the JSON texts as they were written). */
export type StoredLogRow = LogSummaryRow & Pick<Selectable<RequestLogsTable>, 'request_payload' | 'response_payload' | 'detail' | 'payloads_omitted'>;

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
