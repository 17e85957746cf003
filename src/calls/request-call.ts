import type { CacheQuery, CacheTicket, Embedder } from '../cache/index.js';
import type { ResolvedModel } from '../catalog/index.js';
import { GatewayError } from '../errors/index.js';
import type { Principal } from '../keys/index.js';
import { estimateTokens, type Admission, type UsageEstimate } from '../limits/index.js';
import type { AttemptRecord, CacheRecord, Caller, FinishedRequest, LoggedErrorCode, MediaSummary, RecordMode, ToolCallRecord } from '../logs/index.js';
import type { UpstreamObjectRef } from '../formats/index.js';
import type { TokenUsage } from '../model-api/index.js';
import { endUserOf } from '../budgets/index.js';
import { guardrailsHeader, type GuardrailVerdict } from '../guardrails/index.js';
import type { CallEntry, CallLedger, Capability, CheckedCall, ProviderCall } from './checked-call.js';
import { costOfEntries, finishedRequest, settlementOfEntries, type CallState } from './finish.js';
import type { CallRequest, ModelCalls } from './model-calls.js';

/** Where a request starts: what the HTTP layer knows before its body is read. */
export interface RequestStart {
  requestId: string;
  /** The public endpoint (a playground relay's is the endpoint it relays). */
  endpoint: string;
  /** The caller's X-Platform-ID, cleaned. */
  platform: string | null;
  startedAt: number;
  /** The caller's X-End-User-ID header (decisions §15); the body's end-user field counts when it is absent. */
  endUserHeader?: string | string[] | undefined;
}

/** How the response of a request ended, as the HTTP layer saw it. */
export interface RequestEnd {
  /** The status sent; null when the client went away before the response ended (logged 499). */
  status: number | null;
  caller: Caller;
  /** Why the gateway cut the connection, when it did (a client that took nothing). */
  cutOff?: string;
}

/** Told of every finished request (metrics, traces), before the HTTP layer hands it to the log. */
export interface FinishedRequestObserver {
  finished(request: FinishedRequest): void;
  /** Settling a request's reservation with the limiter failed (its counters then keep the estimate). */
  settlementFailed?(error: unknown): void;
}

/** What a route says about its request once it knows: the mode it is logged under and the body as it is logged. */
export interface RequestFacts {
  mode: RecordMode;
  payload: unknown;
  streaming?: boolean;
  /** The agent a run belongs to. */
  agent?: string;
}

/** An answer the caller was sent, as the log keeps it. */
export interface Answer {
  payload: unknown;
  /** The payload as the JSON text sent, when the route serialised it already. */
  json?: string;
}

/** Failure facts as the record keeps them. */
interface Failure {
  code: LoggedErrorCode;
  detail: Record<string, unknown> | null;
}

/**
 * One request's call through the model-call path, from the moment the request arrived until
 * its response ended. It is the only writer of the request's record: routes tell it what the
 * request is, the checks and provider calls report to it as they happen (CheckedCall), and
 * `finish` settles the reservation, prices every model call and makes the record, one
 * frozen value, that the HTTP layer hands to the request log.
 */
export class RequestCall implements CallLedger {
  readonly requestId: string;
  readonly startedAt: number;
  readonly endpoint: string;
  private readonly platform: string | null;
  private recordMode: RecordMode | null = null;
  private requestPayload: unknown = null;
  /** The JSON body as parsed, and its bytes as received (see receivedJson). */
  private receivedBody: unknown = undefined;
  private receivedBytes: Uint8Array | undefined;
  private answer: Answer | null = null;
  private streaming = false;
  private agentSlug: string | null = null;
  private extraFacts: Record<string, unknown> | null = null;
  private requestedModel: string | null = null;
  private resolved: ResolvedModel | null = null;
  private mediaSummary: MediaSummary | null = null;
  private audio: number | null = null;
  private readonly dropped: string[] = [];
  private failure: Failure | null = null;
  private readonly entries: CallEntry[] = [];
  /** The calls checked so far: a reservation must be able to price each. */
  private readonly checkedCalls: CheckedCall<Capability>[] = [];
  private readonly toolCalls: { after: number; record: ToolCallRecord }[] = [];
  readonly attempts: AttemptRecord[] = [];
  private admission: Admission | null = null;
  private cacheUse: CacheRecord | null = null;
  private work: Promise<unknown> | undefined;
  private finished: FinishedRequest | null = null;
  /** Who the request reserved for: the key and project guardrails are attached to. */
  principal: Principal | null = null;
  private verdicts: GuardrailVerdict[] | null = null;

  constructor(
    start: RequestStart,
    private readonly calls: ModelCalls,
    private readonly observers: readonly FinishedRequestObserver[],
  ) {
    this.requestId = start.requestId;
    this.startedAt = start.startedAt;
    this.endpoint = start.endpoint;
    this.platform = start.platform;
    this.endUser = endUserOf(start.endUserHeader, undefined);
  }

  /**
   * The end user the request names (decisions §15): its X-End-User-ID header, else its body's
   * field, read once when the route describes the request, before anything is reserved.
   */
  endUser: string | null;

  /** The mode the request is logged under (null until its route said). */
  get mode(): RecordMode | null {
    return this.recordMode;
  }

  /** The catalog id the request's model resolved to, once checked. */
  get resolvedModel(): string | null {
    return this.resolved?.id ?? null;
  }

  /** Whether the route said what the request is (a request refused before its handler ran has not). */
  get described(): boolean {
    return this.recordMode !== null;
  }

  /** The route says what the request is: the mode it is logged under and its body. */
  describe(facts: RequestFacts): void {
    this.recordMode = facts.mode;
    this.requestPayload = facts.payload;
    this.endUser ??= endUserOf(undefined, facts.payload);
    if (facts.streaming !== undefined) this.streaming = facts.streaming;
    if (facts.agent !== undefined) this.agentSlug = facts.agent;
  }

  /**
   * The JSON body as parsed and the bytes it was parsed from. A large body the record keeps as
   * received goes to the request log as these bytes: a copy of bytes, where a structured clone
   * of a large parsed object stalled the event loop (the log's thread parses them instead).
   */
  receivedJson(body: unknown, bytes: Uint8Array): void {
    this.receivedBody = body;
    this.receivedBytes = bytes;
  }

  /** A body refused before any route read it (its schema): logged as received, with the model it named, so an operator sees what the client sent. */
  refusedBody(body: unknown): void {
    if (this.requestPayload !== null || body === undefined) return;
    this.requestPayload = body;
    const model = (body as { model?: unknown } | null)?.model;
    if (typeof model === 'string' && this.requestedModel === null) this.requestedModel = model;
  }

  /** The body as the log keeps it, when it differs from what was received (VETTING's answer keys encrypted, an agent's media as asset ids). */
  logRequestAs(payload: unknown): void {
    this.requestPayload = payload;
  }

  streams(streaming: boolean): void {
    this.streaming = streaming;
  }

  /** Facts beyond the record's columns (an agent run's id, VETTING's stop reason), kept in its detail. */
  note(extra: Record<string, unknown>): void {
    this.extraFacts = this.extraFacts === null ? extra : { ...this.extraFacts, ...extra };
  }

  /** Media the request carried, when the route knows it better than the input policy (a transcription's file, an agent's assets). */
  carried(media: MediaSummary | null): void {
    this.mediaSummary = media;
  }

  /** Seconds of audio the request is priced by (a transcription's, supplied or reported). */
  audioLasted(seconds: number | null): void {
    this.audio = seconds;
  }

  /** Fields the gateway left out as hints the target does not take (decisions §9), by path. */
  droppedFields(fields: readonly string[]): void {
    for (const field of fields) this.dropped.push(field);
  }

  /** The dropped fields so far (for the `x-modelgate-dropped` header). */
  get droppedSoFar(): readonly string[] {
    return this.dropped;
  }

  /** Checks the request's model call: resolve, allow-list, input policy; the record names its model and media. */
  check<C extends Capability>(request: CallRequest<C>): CheckedCall<C> {
    return this.checked(
      this.calls.check(request, this, {
        requested: (model) => (this.requestedModel = model),
        resolved: (resolved) => (this.resolved = resolved),
        media: (media) => (this.mediaSummary = media),
      }),
    );
  }

  /** Checks another model call of the request (VETTING's verification, an agent's node): it is priced and listed in the record, which names the request's own model. */
  subcall<C extends Capability>(request: CallRequest<C>): CheckedCall<C> {
    return this.checked(this.calls.check(request, this));
  }

  private checked<C extends Capability>(call: CheckedCall<C>): CheckedCall<C> {
    this.checkedCalls.push(call as CheckedCall<Capability>);
    return call;
  }

  /**
   * A body sent to the vendor's own API as it is (native pass-through): the objects of the
   * vendor account it names must be ones the gateway made for the key (`made`) or granted to
   * its project, else `403 upstream_object_not_granted` naming the field.
   */
  passesThrough(principal: Principal, refs: readonly UpstreamObjectRef[], made?: ReadonlySet<string>): void {
    this.calls.assertGranted(principal, refs, made);
  }

  /**
   * The request's use of the response cache (docs/caching.md), looked up once its model is
   * checked and before anything is reserved: null when no cache policy applies. The record
   * keeps what it was (a hit: the request whose answer it got, and what that answer cost).
   */
  async cacheTicket(principal: Principal, query: Omit<CacheQuery, 'caller' | 'requestId' | 'embed'>, signal: AbortSignal): Promise<CacheTicket | null> {
    const caller = principal.kind === 'key' ? { keyId: principal.keyId, projectId: principal.projectId } : { keyId: null, projectId: null };
    const ticket = await this.calls.cacheTicket({ ...query, caller, requestId: this.requestId, embed: this.cacheEmbedder(principal, signal) });
    if (ticket !== null) {
      this.cacheUse = {
        status: ticket.status,
        policy: ticket.policy,
        reason: ticket.reason,
        sourceRequestId: ticket.hit?.sourceRequestId ?? null,
        savedMicroUsd: ticket.hit?.savedMicroUsd ?? null,
        similarity: ticket.similarity,
      };
    }
    return ticket;
  }

  /**
   * A semantic cache policy's embedding of the last user turn: a call of this request
   * (`purpose: cache-embedding` in its record), reserved against and settled with the caller's
   * own key, as any model call it makes — so the caller's key pays for it, hit or miss.
   */
  private cacheEmbedder(principal: Principal, signal: AbortSignal): Embedder {
    return async (model, text) => {
      const call = this.subcall({ mode: 'embedding', model, capability: 'embeddings', param: 'cache.semantic.embeddingModel', purpose: 'cache-embedding' });
      const estimate = estimateTokens(call.target.resolved.model.entry.pricing, Buffer.byteLength(text), 0);
      const { result } = await this.metered(
        principal,
        call,
        estimate,
        (embeddings, attempt) => embeddings.embed({ ...attempt, body: { input: text, encoding_format: 'float' }, signal, requestId: this.requestId }),
        signal,
      );
      return firstEmbedding(result.responseJson === undefined ? result.response : JSON.parse(result.responseJson.toString('utf8')));
    };
  }

  /** Whether the request was answered from the response cache. */
  get cacheHit(): boolean {
    return this.cacheUse?.status === 'hit';
  }

  /** Reserves the request's estimate against the principal's limits, once (a 429 when nothing is left); settled when the request finishes. */
  async reserve(principal: Principal, estimate: UsageEstimate): Promise<Admission> {
    this.principal = principal;
    // Every model the request checked is one it may call: each must be one the caps can price
    // (a request that costs nothing by its nature, a token count, is not held to it).
    if (estimate.costUsd !== 0) this.calls.assertPriced(principal, this.checkedCalls);
    const admission = await this.calls.reserve(principal, estimate, this.endUser);
    this.admission = admission;
    return admission;
  }

  /** The steps of a request that makes one model call: check, then reserve its estimate (made from the checked call). */
  async admit<C extends Capability>(principal: Principal, request: CallRequest<C>, estimateOf: (call: CheckedCall<C>) => UsageEstimate): Promise<{ call: CheckedCall<C>; admission: Admission }> {
    const call = this.check(request);
    const estimate = estimateOf(call);
    const admission = await this.reserve(principal, estimate);
    call.reserved(estimate);
    return { call, admission };
  }

  /**
   * A model call known only as the request runs (an agent's node): its estimate is reserved
   * against the caps before it is made, and settled with what it used as soon as it ended.
   * Resolves with the result and the call's usage and cost.
   */
  async metered<C extends Capability, R>(
    principal: Principal,
    call: CheckedCall<C>,
    estimate: UsageEstimate,
    providerCall: ProviderCall<C, R>,
    signal: AbortSignal,
  ): Promise<{ result: R; usage: TokenUsage | null; costMicroUsd: number | null }> {
    this.principal ??= principal;
    this.calls.assertPriced(principal, [call as CheckedCall<Capability>]);
    const reservation = await this.calls.reserveCaps(principal, estimate, this.endUser);
    call.reserved(estimate);
    let entry: CallEntry | undefined;
    const own = () => (entry === undefined ? [] : [entry]);
    let result: R;
    try {
      result = await call.invoke(providerCall, signal, { metered: (made) => (entry = made) });
    } catch (error) {
      // A call cut off by the deadline or the client may have done work nobody measured.
      await reservation.settle(settlementOfEntries(reservation.reserved, own(), signal.aborted));
      throw error;
    }
    await reservation.settle(settlementOfEntries(reservation.reserved, own(), true));
    return { result, usage: entry?.usage ?? null, costMicroUsd: costOfEntries(own()) };
  }

  /** CallLedger: the verdicts of a call's guardrails, kept in the record. */
  guarded(verdicts: readonly GuardrailVerdict[]): void {
    if (verdicts.length === 0) return;
    (this.verdicts ??= []).push(...verdicts);
  }

  /** The `x-modelgate-guardrails` header value of the verdicts so far; null when no guardrail ran. */
  get guardrailsHeader(): string | null {
    return this.verdicts === null ? null : guardrailsHeader(this.verdicts);
  }

  /** CallLedger: a provider call begins. */
  started(purpose: string | null): CallEntry {
    const entry: CallEntry = {
      purpose,
      resolved: null,
      providerName: null,
      usage: null,
      imageCount: null,
      latencyMs: null,
      answered: false,
      failure: null,
      metered: false,
      providerRequestIds: [],
    };
    this.entries.push(entry);
    return entry;
  }

  /** A tool call of the request's tool loop ended: listed in the record's calls, after the model calls made so far. */
  toolCalled(call: { tool: string; server: string; latencyMs: number; outcome: ToolCallRecord['outcome'] }): void {
    const record: ToolCallRecord = { purpose: 'tool', model: call.tool, provider: call.server, usage: null, imageCount: null, costMicroUsd: null, latencyMs: call.latencyMs, outcome: call.outcome };
    this.toolCalls.push({ after: this.entries.length, record });
  }

  /** Usage reported after the call began (a stream's running total): the request's last model call used it. */
  used(usage: TokenUsage): void {
    const entry = this.entries.at(-1);
    if (entry !== undefined) entry.usage = usage;
  }

  /** The caller's answer, as the log keeps it. */
  answered(answer: Answer): void {
    this.answer = answer;
  }

  /** The request failed: its code and the detail for the admin API (the provider's facts included). The first failure is the one kept. */
  failed(error: unknown, options: { message?: boolean } = {}): void {
    if (this.failure !== null) return;
    const gatewayError = error instanceof GatewayError ? error : null;
    const detail = gatewayError?.detail() ?? null;
    this.failure = {
      code: gatewayError?.code ?? 'internal_error',
      detail: options.message === true && gatewayError !== null ? { ...detail, error_message: gatewayError.message } : detail,
    };
  }

  /** A stream the provider ended with a failure after it began: the client got the format's error frame. */
  streamFailed(detail: Record<string, unknown> | undefined): void {
    if (this.failure === null) this.failure = { code: 'provider_error', detail: detail ?? null };
  }

  /** Work that still writes to this call after the reply was handed on (a stream relay): an aborted request is finished once it is done. */
  pending(work: Promise<unknown>): void {
    this.work = work;
  }

  get pendingWork(): Promise<unknown> | undefined {
    return this.work;
  }

  /**
   * The request's response ended: the reservation is settled with what its model calls used,
   * each is priced by the model that served it, and the record is made, once. Observers
   * (metrics, traces) are told; the HTTP layer hands the result to the request log.
   */
  finish(end: RequestEnd): FinishedRequest {
    if (this.finished !== null) return this.finished;
    if (end.status === null) {
      // 499 is the client's doing, whatever was recorded after its upstream call was cancelled for it.
      this.failure = { code: 'client_closed', detail: end.cutOff === undefined ? (this.failure?.detail ?? null) : { ...this.failure?.detail, reason: end.cutOff } };
    }
    const finished = finishedRequest(
      {
        requestId: this.requestId,
        startedAt: this.startedAt,
        endpoint: this.endpoint,
        platform: this.platform,
        mode: this.recordMode,
        requestedModel: this.requestedModel,
        resolved: this.resolved,
        streaming: this.streaming,
        audioSeconds: this.audio,
        media: this.mediaSummary,
        ...this.loggedRequestPayload(),
        answer: this.answer,
        failure: this.failure,
        attempts: this.attempts,
        entries: this.entries,
        toolCalls: this.toolCalls,
        dropped: this.dropped,
        agent: this.agentSlug,
        endUser: this.endUser === null ? null : this.calls.storedEndUser(this.principal, this.endUser),
        extra: this.verdicts === null ? this.extraFacts : { ...this.extraFacts, guardrails: this.verdicts.map(recordedVerdict) },
        admission: this.admission,
        cache: this.cacheUse,
      },
      end,
      (error) => {
        for (const observer of this.observers) observer.settlementFailed?.(error);
      },
    );
    this.finished = finished;
    for (const observer of this.observers) observer.finished(finished);
    return finished;
  }

  /** The request payload as the record keeps it: a large body kept as received, as its bytes. */
  private loggedRequestPayload(): Pick<CallState, 'requestPayload'> & Partial<Pick<CallState, 'requestPayloadJson'>> {
    const bytes = this.receivedBytes;
    if (bytes !== undefined && bytes.byteLength >= LARGE_PAYLOAD_BYTES && this.requestPayload === this.receivedBody) return { requestPayload: null, requestPayloadJson: bytes };
    return { requestPayload: this.requestPayload };
  }
}

/**
 * From this size a body logged as received is handed to the log as its bytes: below it, the
 * thread's second parse would cost more than the clone of the parsed object saves.
 */
const LARGE_PAYLOAD_BYTES = 64 * 1024;

/** A verdict as the record keeps it: latency to the tenth of a millisecond. */
function recordedVerdict(verdict: GuardrailVerdict): GuardrailVerdict {
  return { ...verdict, latencyMs: Math.round(verdict.latencyMs * 10) / 10 };
}

/** The first vector of an OpenAI-shaped embeddings response (floats asked for); a response without one is the provider's error. */
function firstEmbedding(response: unknown): readonly number[] {
  const embedding = (response as { data?: { embedding?: unknown }[] } | null)?.data?.[0]?.embedding;
  if (!Array.isArray(embedding) || embedding.length === 0 || typeof embedding[0] !== 'number') {
    throw new GatewayError('provider_error', 'The cache embedding model answered without a vector of floats.');
  }
  return embedding as number[];
}
