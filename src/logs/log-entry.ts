import { createHash } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { RequestLogsTable } from '../storage/index.js';
import type { Cost } from './cost.js';
import { parseJsonBytes, type LongStringValue } from '../json/index.js';
import { mediaReferenceOfBytes, redactText, redactValue } from '../redaction/index.js';
import type { RequestRecord } from './types.js';

/** Who made a request, as far as it is known (nothing for an unrecognised key). */
export interface Caller {
  keyId: string | null;
  projectId: string | null;
  fingerprint: string | null;
}

/**
 * A request whose response has ended, with what the gateway measured about it: what the log
 * writer takes. Plain data (no functions, no promises), so it can be handed to the writer's
 * thread as it is.
 */
export interface FinishedRequest {
  record: RequestRecord;
  caller: Caller;
  status: number;
  latencyMs: number;
  cost: Cost;
  /** The providers' own ids of the request's calls, in call order. */
  providerRequestIds?: readonly string[] | undefined;
}

/**
 * A finished request as the writer queues it and hands it to its thread: a copy of the
 * record's fields the row is made of, the response payload as the JSON text the caller was
 * sent when the route has it (a string crosses to the thread for the price of a copy; the
 * parsed answer would be walked and rebuilt there), and what the queue counts it as.
 */
export interface QueuedRequest extends FinishedRequest {
  /** Why the payloads were dropped before the record was written (the queue's byte bound), or null. */
  payloadsOmitted: 'queue_bytes' | null;
  /** Characters of payload, detail and media the record holds, as the queue's byte bound counts them. */
  characters: number;
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
 * serialised (what the gateway sent): read when the payload itself is not at hand, and
 * stored as it is when redaction changes nothing.
 */
function storedPayload(payload: unknown, opaqueStrings: boolean, maxBytes: number, json?: string): string | null {
  const value = payload ?? (json === undefined ? null : (JSON.parse(json) as unknown));
  if (value === null || value === undefined) return null;
  const redacted = redactValue(value, { opaqueStrings });
  return boundedPayload(redacted === value && json !== undefined ? json : toJson(redacted), maxBytes);
}

/**
 * A payload received as JSON bytes (a large body), as stored. Its media is read as bytes while
 * it is parsed (mediaReferenceOfBytes), so a megabyte image never becomes a string here; the
 * bytes are the stored text when redaction changes nothing.
 */
function storedJsonBytes(bytes: Uint8Array, opaqueStrings: boolean, maxBytes: number): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let referenced = false;
  const mediaAsReference: LongStringValue = (name, text) => {
    const reference = mediaReferenceOfBytes(name, text);
    if (reference === null) return text.toString('utf8');
    referenced = true;
    return reference;
  };
  const { value } = parseJsonBytes(buffer, opaqueStrings ? undefined : mediaAsReference);
  const redacted = redactValue(value, { opaqueStrings });
  return boundedPayload(redacted === value && !referenced ? buffer.toString('utf8') : toJson(redacted), maxBytes);
}

/** A payload's text, or in its place its size, digest and a preview when it is larger than `maxBytes`. */
function boundedPayload(text: string, maxBytes: number): string {
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

/** A request's use of the response cache as the record's detail shows it (decisions §14: `cache.hit`, `cache.source_request_id`, `cache.saved_usd`). */
function cacheDetail(cache: NonNullable<RequestRecord['cache']>): Record<string, unknown> {
  return {
    hit: cache.status === 'hit',
    status: cache.status,
    policy: cache.policy,
    ...(cache.reason === null ? {} : { reason: cache.reason }),
    ...(cache.status === 'hit' ? { source_request_id: cache.sourceRequestId, saved_usd: cache.savedMicroUsd === null ? null : cache.savedMicroUsd / 1_000_000 } : {}),
    ...(cache.similarity == null ? {} : { semantic: true, similarity: cache.similarity }),
  };
}

function storedObject(value: Record<string, unknown> | null): string | null {
  if (value === null || Object.keys(value).length === 0) return null;
  return toJson(redactValue(value));
}

/** Members counted once an object or array is past this depth (the redaction stops there too). */
const MAX_COUNTED_DEPTH = 32;

/**
 * About how many characters `value` takes as JSON: its strings' lengths and a few per other
 * member. Counts without serialising; what the queue's byte bound reads.
 */
function approximateCharacters(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 8;
  if (value instanceof Uint8Array) return value.byteLength;
  if (depth >= MAX_COUNTED_DEPTH) return 8;
  let characters = 2;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) characters += 1 + approximateCharacters(item, depth + 1);
    return characters;
  }
  const members = value as Record<string, unknown>;
  for (const name in members) characters += name.length + 4 + approximateCharacters(members[name], depth + 1);
  return characters;
}

/** What a queued record counts toward the queue's byte bound: its payloads, detail and media. */
function charactersOf(record: RequestRecord): number {
  return (
    (record.requestPayloadJson?.byteLength ?? approximateCharacters(record.requestPayload)) +
    (record.responsePayloadJson?.length ?? approximateCharacters(record.responsePayload)) +
    (record.logDetail === null ? 0 : approximateCharacters(record.logDetail)) +
    (record.media === null ? 0 : approximateCharacters(record.media))
  );
}

/**
 * The queued copy of a finished request (see QueuedRequest): the record is plain data already;
 * `payloads` false: neither payload is kept (logs.payloads).
 */
export function queuedRequestOf(finished: FinishedRequest, payloads: boolean): QueuedRequest {
  const { record } = finished;
  const responsePayloadJson = payloads ? record.responsePayloadJson : undefined;
  const requestPayloadJson = payloads ? record.requestPayloadJson : undefined;
  const { responsePayloadJson: _sent, requestPayloadJson: _received, ...rest } = record;
  const queued: RequestRecord = {
    ...rest,
    requestPayload: payloads ? record.requestPayload : null,
    responsePayload: payloads && responsePayloadJson === undefined ? record.responsePayload : null,
    ...(requestPayloadJson === undefined ? {} : { requestPayloadJson }),
    ...(responsePayloadJson === undefined ? {} : { responsePayloadJson }),
  };
  return {
    record: queued,
    caller: finished.caller,
    status: finished.status,
    latencyMs: finished.latencyMs,
    cost: finished.cost,
    providerRequestIds: finished.providerRequestIds,
    payloadsOmitted: null,
    characters: charactersOf(queued),
  };
}

/** The queued request without its payloads, marked as shed by the queue's byte bound. */
export function withoutPayloads(queued: QueuedRequest): QueuedRequest {
  const { responsePayloadJson: shedJson, requestPayloadJson: shedBytes, ...kept } = queued.record;
  const record = { ...kept, requestPayload: null, responsePayload: null };
  return shedJson === undefined && shedBytes === undefined && queued.record.requestPayload === null && queued.record.responsePayload === null
    ? queued
    : { ...queued, record, payloadsOmitted: 'queue_bytes', characters: charactersOf(record) };
}

/**
 * The row written for a finished request. Everything stored goes through the redaction here:
 * payloads, media summary and detail. No catalog data is copied: the row names the model.
 * Runs on the writer's thread.
 */
export function toLogRow(finished: FinishedRequest & Partial<Pick<QueuedRequest, 'payloadsOmitted'>>, options: LogEntryOptions): RequestLogRow {
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
    ...(record.cache === undefined ? {} : { cache: cacheDetail(record.cache) }),
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
    cache_status: record.cache?.status ?? null,
    cache_saved_micro_usd: record.cache?.status === 'hit' ? record.cache.savedMicroUsd : null,
    end_user: record.endUser ?? null,
    request_payload: !options.payloads
      ? null
      : record.requestPayloadJson === undefined
        ? storedPayload(record.requestPayload, opaque, options.maxPayloadBytes)
        : storedJsonBytes(record.requestPayloadJson, opaque, options.maxPayloadBytes),
    response_payload: options.payloads ? storedPayload(record.responsePayload, opaque, options.maxPayloadBytes, record.responsePayloadJson) : null,
    payloads_omitted: finished.payloadsOmitted ?? null,
    detail: storedObject(detail),
  };
}
