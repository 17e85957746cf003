import type { ModelPricing, ResolvedModel } from '../catalog/index.js';
import { computeCombinedCost, computeCost, type AttemptRecord, type CacheRecord, type Cost, type FinishedRequest, type LoggedErrorCode, type MediaSummary, type ModelCallRecord, type RecordMode, type RequestRecord, type ToolCallRecord } from '../logs/index.js';
import type { Admission, ActualUsage, UsageEstimate } from '../limits/index.js';
import type { TokenUsage } from '../model-api/index.js';
import type { CallEntry } from './checked-call.js';
import type { Answer, RequestEnd } from './request-call.js';
import { settlementOf } from './settlement.js';

/** nginx's status for "the client closed the connection before the response ended". */
const CLIENT_CLOSED_REQUEST = 499;

/** Everything a request's call gathered, as `finish` reads it. */
export interface CallState {
  requestId: string;
  startedAt: number;
  endpoint: string;
  platform: string | null;
  mode: RecordMode | null;
  requestedModel: string | null;
  resolved: ResolvedModel | null;
  streaming: boolean;
  audioSeconds: number | null;
  media: MediaSummary | null;
  requestPayload: unknown;
  /** The request payload as the JSON bytes received, in place of requestPayload (a large body kept as received). */
  requestPayloadJson?: Uint8Array;
  answer: Answer | null;
  failure: { code: LoggedErrorCode; detail: Record<string, unknown> | null } | null;
  attempts: readonly AttemptRecord[];
  entries: readonly CallEntry[];
  /** Tool calls of the request's tool loop, each after the model calls made before it (`after` of them). */
  toolCalls: readonly { after: number; record: ToolCallRecord }[];
  dropped: readonly string[];
  agent: string | null;
  /** The end user as the log keeps it (hashed when the project says so). */
  endUser: string | null;
  extra: Record<string, unknown> | null;
  admission: Admission | null;
  /** The request's use of the response cache; null when no policy applied. */
  cache: CacheRecord | null;
}

function pricingOf(entry: CallEntry): ModelPricing | null {
  return entry.resolved?.model.entry.pricing ?? null;
}

/** The sum of several calls' usage; null when none reported any. */
export function addUsages(usages: readonly (TokenUsage | null)[]): TokenUsage | null {
  let total: TokenUsage | null = null;
  const sum = (a: number | null | undefined, b: number | null | undefined) => (a == null && b == null ? null : (a ?? 0) + (b ?? 0));
  for (const usage of usages) {
    if (usage === null) continue;
    if (total === null) {
      total = { ...usage };
      continue;
    }
    const cacheWrite = sum(total.cacheWritePromptTokens, usage.cacheWritePromptTokens);
    const cacheWrite1h = sum(total.cacheWrite1hPromptTokens, usage.cacheWrite1hPromptTokens);
    total = {
      promptTokens: total.promptTokens + usage.promptTokens,
      completionTokens: total.completionTokens + usage.completionTokens,
      totalTokens: total.totalTokens + usage.totalTokens,
      cachedPromptTokens: sum(total.cachedPromptTokens, usage.cachedPromptTokens),
      ...(cacheWrite === null ? {} : { cacheWritePromptTokens: cacheWrite }),
      ...(cacheWrite1h === null ? {} : { cacheWrite1hPromptTokens: cacheWrite1h }),
    };
  }
  return total;
}

function costOfEntry(entry: CallEntry, audioSeconds: number | null, succeeded: boolean): Cost {
  return computeCost({ pricing: pricingOf(entry), usage: entry.usage, imageCount: entry.imageCount, audioSeconds, succeeded });
}

/** The cost of model calls, each at the price of the model that served it; null when none could be priced. */
export function costOfEntries(entries: readonly CallEntry[]): number | null {
  if (entries.length === 1) return costOfEntry(entries[0]!, null, entries[0]!.answered).microUsd;
  return computeCombinedCost(entries.map((entry) => ({ pricing: pricingOf(entry), usage: entry.usage, imageCount: entry.imageCount, audioSeconds: null, succeeded: entry.answered }))).microUsd;
}

/** What a reservation is settled with for some model calls (see settlementOf). */
export function settlementOfEntries(reserved: UsageEstimate, entries: readonly CallEntry[], workDone: boolean): ActualUsage {
  const usage = addUsages(entries.map((entry) => entry.usage));
  return settlementOf(reserved, { usage, costMicroUsd: entries.length === 0 ? null : costOfEntries(entries) }, workDone);
}

/**
 * The request's cost: of its one model call, or the sum of its calls at their models' prices.
 * A request refused before any call is priced by its model (zero: nothing was used), or null
 * when it named none.
 */
function requestCost(state: CallState, succeeded: boolean, answeredAborted: boolean): Cost {
  const { entries } = state;
  if (entries.length === 0) {
    return computeCost({ pricing: state.resolved?.model.entry.pricing ?? null, usage: null, imageCount: null, audioSeconds: state.audioSeconds, succeeded });
  }
  if (entries.length === 1) return costOfEntry(entries[0]!, state.audioSeconds, succeeded || (answeredAborted && entries[0]!.answered));
  return computeCombinedCost(
    entries.map((entry) => ({ pricing: pricingOf(entry), usage: entry.usage, imageCount: entry.imageCount, audioSeconds: null, succeeded: entry.answered })),
  );
}

function callRecords(entries: readonly CallEntry[], toolCalls: CallState['toolCalls'], namesNoModel: boolean): (ModelCallRecord | ToolCallRecord)[] | undefined {
  // A record that names no model of its own (an agent run) lists even its one call: usage by
  // model reads it there (src/logs/log-usage.ts).
  if (entries.length < (namesNoModel ? 1 : 2) && toolCalls.length === 0) return undefined;
  const records: (ModelCallRecord | ToolCallRecord)[] = toolCalls.filter((call) => call.after === 0).map((call) => call.record);
  for (const [index, entry] of entries.entries()) {
    records.push({
      purpose: entry.purpose,
      model: entry.resolved?.id ?? 'unknown',
      provider: entry.providerName ?? 'unknown',
      usage: entry.usage,
      imageCount: entry.imageCount,
      costMicroUsd: costOfEntry(entry, null, entry.answered).microUsd,
      outcome: entry.answered ? 'ok' : ((entry.failure ?? 'internal_error') as ModelCallRecord['outcome']),
    });
    for (const call of toolCalls) if (call.after === index + 1) records.push(call.record);
  }
  return records;
}

function callsMember(calls: (ModelCallRecord | ToolCallRecord)[] | undefined): { calls?: (ModelCallRecord | ToolCallRecord)[] } {
  return calls === undefined ? {} : { calls };
}

function sumImages(entries: readonly CallEntry[]): number | null {
  let images: number | null = null;
  for (const entry of entries) if (entry.imageCount !== null) images = (images ?? 0) + entry.imageCount;
  return images;
}

/** The request's finished record, its cost and its settlement: the one place they are made. */
export function finishedRequest(state: CallState, end: RequestEnd, settlementFailed: (error: unknown) => void): FinishedRequest {
  const aborted = end.status === null;
  const status = end.status ?? CLIENT_CLOSED_REQUEST;
  const latencyMs = Date.now() - state.startedAt;
  const { entries } = state;
  const firstAnswered = entries.find((entry) => entry.answered);
  const upstreamLatencyMs = firstAnswered?.latencyMs ?? null;
  // A stream the client left after the provider began answering used something too.
  const cacheHit = state.cache?.status === 'hit';
  // A hit made no provider call for its answer: it costs the caller nothing (its requests per
  // minute still counted) but a semantic policy's embedding of the turn, its only call.
  const cost: Cost = cacheHit && entries.length === 0 ? { microUsd: 0, startingPrice: false } : requestCost(state, status < 400, aborted);
  // The model that served the request's one call (a fallback after a fallback); a request that
  // names no model of its own (an agent run) names none.
  // A hit's one call, if any, is the cache's embedding, not its model.
  const servedBy = state.resolved !== null && !cacheHit && entries.length === 1 && entries[0]!.answered ? entries[0]! : null;
  const resolvedModel = servedBy?.resolved?.id ?? state.resolved?.id ?? null;
  const provider = servedBy?.providerName ?? state.resolved?.model.provider ?? null;
  const usage = entries.length === 1 ? entries[0]!.usage : addUsages(entries.map((entry) => entry.usage));

  if (state.admission !== null) {
    const unmetered = entries.filter((entry) => !entry.metered);
    // A call the client's leaving cut off did work nobody measured: the reservation stays counted.
    const cutOff = aborted && unmetered.some((entry) => !entry.answered);
    const measuredCost = cutOff ? null : unmetered.length === entries.length ? cost.microUsd : unmetered.length === 0 ? 0 : costOfEntries(unmetered);
    const measuredUsage = cutOff ? null : unmetered.length === entries.length ? usage : addUsages(unmetered.map((entry) => entry.usage));
    const actual = cacheHit ? { tokens: 0, costUsd: 0 } : settlementOf(state.admission.reserved, { usage: measuredUsage, costMicroUsd: measuredCost }, status < 400 || aborted);
    state.admission.settle(actual).catch(settlementFailed);
  }

  const record: RequestRecord = {
    requestId: state.requestId,
    startedAt: state.startedAt,
    endpoint: state.endpoint,
    platform: state.platform,
    mode: state.mode,
    requestedModel: state.requestedModel,
    resolvedModel,
    provider,
    streaming: state.streaming,
    usage,
    imageCount: sumImages(entries),
    audioSeconds: state.audioSeconds,
    media: state.media,
    requestPayload: state.requestPayload,
    ...(state.requestPayloadJson === undefined ? {} : { requestPayloadJson: state.requestPayloadJson }),
    responsePayload: state.answer?.payload ?? null,
    ...(state.answer?.json === undefined ? {} : { responsePayloadJson: state.answer.json }),
    logDetail: state.failure?.detail ?? null,
    errorCode: state.failure?.code ?? null,
    ...(state.attempts.length === 0 ? {} : { attempts: state.attempts }),
    ...callsMember(callRecords(entries, state.toolCalls, state.resolved === null)),
    droppedFields: state.dropped,
    upstreamLatencyMs,
    agent: state.agent,
    endUser: state.endUser,
    extra: state.extra,
    ...(state.cache === null ? {} : { cache: state.cache }),
  };
  const providerRequestIds = entries.flatMap((entry) => entry.providerRequestIds);
  return { record, caller: end.caller, status, latencyMs, cost, ...(providerRequestIds.length === 0 ? {} : { providerRequestIds }) };
}
