import { createHash } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { RequestLogsTable } from '../storage/index.js';
import type { Cost } from './cost.js';
import { redactText, redactValue } from '../redaction/index.js';
import type { RequestRecord } from './types.js';

/** Who made a request, as far as it is known (nothing for an unrecognised key). */
export interface Caller {
  keyId: string | null;
  projectId: string | null;
  fingerprint: string | null;
}

/** A request whose response has ended, with what the gateway measured about it. */
export interface FinishedRequest {
  record: RequestRecord;
  caller: Caller;
  status: number;
  latencyMs: number;
  cost: Cost;
  /** The providers' own ids of the request's calls, in call order. */
  providerRequestIds?: readonly string[] | undefined;
}

export interface LogEntryOptions {
  /** false: request and response payloads are not kept (config logs.payloads). */
  payloads: boolean;
  /** Larger payloads keep a preview, their size and digest. */
  maxPayloadBytes: number;
}

/** A record as queued: payloads as JSON text (the store compresses them and assigns the write sequence). */
export type RequestLogRow = Omit<Insertable<RequestLogsTable>, 'seq' | 'payloads'>;

const PREVIEW_CHARACTERS = 4096;

function isUtility(record: RequestRecord): boolean {
  return record.mode === 'utility' || record.endpoint.startsWith('/v1/utils/');
}

function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return JSON.stringify('[omitted: not serialisable]');
  }
}

/**
 * A payload as stored: redacted, and bounded in size. `json` is the payload already
 * serialised (what the gateway sent): stored as it is when redaction changes nothing.
 */
function storedPayload(payload: unknown, opaqueStrings: boolean, maxBytes: number, json?: string): string | null {
  if (payload === null || payload === undefined) return null;
  const redacted = redactValue(payload, { opaqueStrings });
  const text = redacted === payload && json !== undefined ? json : toJson(redacted);
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most payloads need no count.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  return toJson({
    truncated: true,
    bytes,
    sha256: createHash('sha256').update(text).digest('hex'),
    preview: text.slice(0, PREVIEW_CHARACTERS),
  });
}

/** Longest model name a row keeps; the catalog's error messages quote as much. */
const MAX_NAME_CHARACTERS = 200;

/**
 * A name the caller wrote (the model it asked for, its platform), as a column can hold it:
 * redacted (swapped settings send a key as the model), bounded, and without U+0000, which
 * PostgreSQL's text cannot hold (the row would be refused).
 */
function storedName(name: string | null): string | null {
  if (name === null) return null;
  const bounded = redactText(name.length > MAX_NAME_CHARACTERS ? name.slice(0, MAX_NAME_CHARACTERS) : name);
  return bounded.includes('\0') ? bounded.replaceAll('\0', '\uFFFD') : bounded;
}

/** The largest count the token columns hold on every database (PostgreSQL's integer). */
const MAX_STORED_COUNT = 2_147_483_647;

/**
 * A token count as the columns can hold it: a larger one (no real request comes near it) is
 * kept as not reported rather than have the database refuse the whole record. The cost is
 * computed from the count the provider reported.
 */
function storedCount(count: number | null | undefined): number | null {
  return count === undefined || count === null || count > MAX_STORED_COUNT ? null : count;
}

/** Longest list of provider ids a row keeps (an agent run may make many calls). */
const MAX_PROVIDER_IDS_CHARACTERS = 1000;

function storedProviderRequestIds(ids: readonly string[] | undefined): string | null {
  if (ids === undefined || ids.length === 0) return null;
  return storedName(ids.join(' ').slice(0, MAX_PROVIDER_IDS_CHARACTERS).replaceAll('\0', '\uFFFD'));
}

/** Prompt tokens written to the provider's cache, when it reported any: they explain a cost above the input price. */
function cacheWritesOf(usage: RequestRecord['usage']): Record<string, number> {
  const written = usage?.cacheWritePromptTokens ?? 0;
  if (written === 0) return {};
  return { cacheWriteTokens: written, cacheWrite1hTokens: usage?.cacheWrite1hPromptTokens ?? 0 };
}

function storedObject(value: Record<string, unknown> | null): string | null {
  if (value === null || Object.keys(value).length === 0) return null;
  return toJson(redactValue(value));
}

/**
 * The row written for a finished request. Everything stored goes through the redaction here:
 * payloads, media summary and detail. No catalog data is copied: the row names the model.
 */
export function toLogRow(finished: FinishedRequest, options: LogEntryOptions): RequestLogRow {
  const { record, caller, cost } = finished;
  const usage = record.usage;
  const opaque = isUtility(record);
  const detail = {
    ...record.logDetail,
    ...cacheWritesOf(usage),
    ...(record.extra === null ? {} : { extra: record.extra }),
    ...(record.attempts === undefined ? {} : { attempts: record.attempts }),
    ...(record.calls === undefined ? {} : { calls: record.calls }),
    ...(record.droppedFields.length === 0 ? {} : { droppedFields: record.droppedFields }),
  };
  return {
    request_id: record.requestId,
    started_at: record.startedAt,
    endpoint: record.endpoint,
    mode: record.mode,
    platform: storedName(record.platform),
    key_id: caller.keyId,
    project_id: caller.projectId,
    fingerprint: caller.fingerprint,
    requested_model: storedName(record.requestedModel),
    // An id inferred for a compatible provider is the caller's text too.
    resolved_model: storedName(record.resolvedModel),
    provider: record.provider,
    status: finished.status,
    error_code: record.errorCode,
    latency_ms: Math.max(0, Math.round(finished.latencyMs)),
    upstream_latency_ms: record.upstreamLatencyMs === null ? null : Math.round(record.upstreamLatencyMs),
    streaming: record.streaming ? 1 : 0,
    prompt_tokens: storedCount(usage?.promptTokens),
    completion_tokens: storedCount(usage?.completionTokens),
    cached_tokens: storedCount(usage?.cachedPromptTokens),
    total_tokens: storedCount(usage?.totalTokens),
    image_count: record.imageCount,
    audio_seconds: record.audioSeconds,
    cost_micro_usd: cost.microUsd,
    cost_flag: cost.startingPrice ? 'starting_price' : null,
    media: record.media === null ? null : toJson(redactValue(record.media)),
    provider_request_id: storedProviderRequestIds(finished.providerRequestIds),
    agent: record.agent,
    request_payload: options.payloads ? storedPayload(record.requestPayload, opaque, options.maxPayloadBytes) : null,
    response_payload: options.payloads ? storedPayload(record.responsePayload, opaque, options.maxPayloadBytes, record.responsePayloadJson) : null,
    detail: storedObject(detail),
  };
}
