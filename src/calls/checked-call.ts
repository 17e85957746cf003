import { isPriced, type ModelPricing, type ResolvedModel } from '../catalog/index.js';
import type { AttemptRecord, MediaSummary } from '../logs/index.js';
import type { Provider, TokenUsage, UpstreamNotes } from '../model-api/index.js';
import type { RoutePlan, Router, RouteTarget } from '../routing/index.js';
import type { UsageEstimate } from '../limits/index.js';
import { CallGuard, type CheckerAsk, type Guardrails, type GuardrailVerdict } from '../guardrails/index.js';
import type { Principal } from '../keys/index.js';
import type { CacheTicket } from '../cache/index.js';
import { costOfEntries } from './finish.js';

/** The provider capabilities a model call can use. */
export type Capability = 'chat' | 'responses' | 'messages' | 'geminiApi' | 'embeddings' | 'images' | 'speech' | 'transcription';

/** The model and provider capability a call resolved to. */
export interface CallTarget<C extends Capability> {
  resolved: ResolvedModel;
  provider: Provider;
  capability: NonNullable<Provider[C]>;
}

/**
 * What one attempt of a call sends besides the caller's body: the upstream model, the
 * attempt's deadline when routing sets one, and where the adapter notes what the provider said.
 */
export interface UpstreamAttempt {
  upstreamModel: string;
  timeoutMs?: number | undefined;
  notes: UpstreamNotes;
}

/** A provider call as made by `CheckedCall.invoke`: the capability, and the attempt's fields to add to the call. */
export type ProviderCall<C extends Capability, R> = (capability: NonNullable<Provider[C]>, attempt: UpstreamAttempt) => Promise<R>;

/** What a checked call needs to be routed: the router, the model's plan, and the checks a fallback model must pass. */
export interface Routing {
  router: Router;
  plan: RoutePlan;
  /** Whether a fallback model takes the call's input (its modalities). */
  accepts(target: RouteTarget): boolean;
}

/** What a provider call's result says it used, read by the call path for the record and the cost. */
export interface Measured {
  usage?: TokenUsage | null;
  imageCount?: number;
}

/**
 * Where a checked call reports each provider call it makes: the request it belongs to (a
 * RequestCall keeps them in its record), or nothing for a call outside a request.
 */
export interface CallLedger {
  /** A provider call is about to be made; returns its entry, updated as it ends. */
  started(purpose: string | null): CallEntry;
  /** Every try of a routed call is appended here. */
  readonly attempts: AttemptRecord[];
  /** Who the request reserved for, as guardrails are attached by key and project (null: not yet). */
  readonly principal?: Principal | null;
  /** The verdicts of the guardrails a call ran. */
  guarded?(verdicts: readonly GuardrailVerdict[]): void;
  /** The request's id, told to the checks a guardrail makes (a webhook's metadata, a checker model's call). */
  readonly requestId?: string;
}

/** One provider call as a request's ledger keeps it. */
export interface CallEntry {
  purpose: string | null;
  /** The model that served (or last failed): its id, provider and pricing. */
  resolved: ResolvedModel | null;
  providerName: string | null;
  usage: TokenUsage | null;
  imageCount: number | null;
  /** Milliseconds until the provider began answering (or failed). */
  latencyMs: number | null;
  /** Set once the provider began answering. */
  answered: boolean;
  /** The error code it failed with. */
  failure: string | null;
  /** Reserved on its own against the caps and settled when it ended (an agent's node); its usage is not the request's admission's. */
  metered: boolean;
  providerRequestIds: string[];
}

/** A call's outcome for its caller besides the result: who served, for the reply's headers. */
export type ServedListener = (model: string, attempts: number) => void;

export interface CheckedCallOptions<C extends Capability> {
  routing?: Routing | undefined;
  purpose?: string | null;
  /** The body field that named the model, for errors about it. */
  param?: string;
  onServed?: ServedListener | undefined;
  /** The input policy applied to messages for the same resolved model (withMessages). */
  inspect?: ((messages: readonly unknown[]) => CheckedCall<C>) | undefined;
  /** The gateway's guardrails, when it has any and the call is guarded: those attached run on its input and answer. */
  guardrails?: Guardrails | undefined;
  /** The model calls of model-based guardrails, listed in the same ledger. */
  checker?: CheckerAsk | undefined;
}

/** Whether a capability serves the model (a cloud's Messages API: its Claude models only). */
function servesModel(capability: object, upstreamModel: string): boolean {
  const scoped = capability as { servesModel?: (model: string) => boolean };
  return scoped.servesModel?.(upstreamModel) ?? true;
}

/** Whether a routed deployment's provider has the capability, for the deployment's model. */
function usableFor(deployment: RouteTarget['deployments'][number], capability: Capability): boolean {
  const own = deployment.provider[capability];
  return own !== undefined && servesModel(own, deployment.upstreamId);
}

function measuredOf(result: unknown): Measured {
  if (typeof result !== 'object' || result === null) return {};
  const { usage, imageCount } = result as { usage?: unknown; imageCount?: unknown };
  return {
    ...(usage !== undefined ? { usage: usage as TokenUsage | null } : {}),
    ...(typeof imageCount === 'number' ? { imageCount } : {}),
  };
}

/**
 * A call that passed resolution, the allow-list and the input policy. Only through it can a
 * provider be called, so no path reaches a provider with input the policy has not seen.
 * Every provider call it makes is reported to its ledger (the request's record): the model
 * that served, the attempts, the usage its result reported, the provider's request ids.
 */
export class CheckedCall<C extends Capability> {
  constructor(
    readonly target: CallTarget<C>,
    /** The media the messages carry, for the request log (null: none, or no messages). */
    readonly media: MediaSummary | null,
    private readonly capabilityName: C,
    private readonly ledger: CallLedger | undefined,
    private readonly options: CheckedCallOptions<C> = {},
    /** The reserved estimate's tokens, counted against a routed deployment's tpm (shared with `through`'s calls). */
    private readonly estimate = { tokens: 0 },
  ) {}

  /** Set for a caller whose cost is capped: a fallback the gateway cannot price is not tried. */
  private pricedFallbacksOnly = false;

  requirePricedFallbacks(): void {
    this.pricedFallbacksOnly = true;
  }

  /**
   * The same model with these messages checked by the input policy: a call whose messages are
   * built from what the model can take (an agent's node) resolves its model once.
   */
  withMessages(messages: readonly unknown[]): CheckedCall<C> {
    if (this.options.inspect === undefined) throw new Error('a checked call outside the model-call path has no input policy');
    return this.options.inspect(messages);
  }

  /** The body field that named the model. */
  get param(): string {
    return this.options.param ?? 'model';
  }

  /** The catalog pricing of the model the call resolved to. */
  get pricing(): ModelPricing | null {
    return this.target.resolved.model.entry.pricing;
  }

  /** Notes the reserved estimate (counted against a routed deployment's tpm). */
  reserved(estimate: UsageEstimate): void {
    this.estimate.tokens = estimate.tokens;
  }

  /**
   * The same checked call through another capability of its provider (a public format the
   * provider speaks natively), or undefined when the provider has none.
   */
  through<K extends Capability>(capability: K): CheckedCall<K> | undefined {
    const own = this.target.provider[capability];
    if (own === undefined || !servesModel(own, this.target.resolved.model.upstreamId)) return undefined;
    const target = { resolved: this.target.resolved, provider: this.target.provider, capability: own as NonNullable<Provider[K]> };
    // Routed, it goes only to the deployments and fallbacks whose provider has that capability too.
    const { inspect: _inspect, ...options } = this.options;
    return new CheckedCall(target, this.media, capability, this.ledger, options, this.estimate);
  }

  /**
   * Makes the provider call. The one place a model call reaches a provider: a routed model's
   * deployments, retries and fallbacks happen here, before the first byte (docs/routing.md).
   * `signal` is the caller's: once it aborts, nothing more is tried. Resolves when the answer
   * began (a stream's first frame); the usage its result reports is recorded.
   *
   * With a cache ticket (the request's, from `RequestCall.cacheTicket`): a hit is answered
   * with the kept result and no provider call; a miss's result is kept once it is whole.
   */
  async invoke<R>(call: ProviderCall<C, R>, signal?: AbortSignal, entryOptions: { metered?: (entry: CallEntry) => void; cache?: CacheTicket | null } = {}): Promise<R> {
    const cache = entryOptions.cache ?? null;
    if (cache?.hit != null) {
      this.options.onServed?.(this.target.resolved.id, 0);
      return cache.hit.result as R;
    }
    const entry = this.ledger?.started(this.options.purpose ?? null);
    if (entry !== undefined) {
      if (entryOptions.metered !== undefined) {
        entry.metered = true;
        entryOptions.metered(entry);
      }
      entry.resolved = this.target.resolved;
      entry.providerName = this.target.resolved.model.provider;
    }
    const attempts = this.ledger?.attempts ?? [];
    const before = attempts.length;
    const started = performance.now();
    let servedModel = this.target.resolved.id;
    const guard = this.options.guardrails === undefined ? null : this.guard(this.options.guardrails, signal);
    try {
      const served = await this.attempt(guard === null ? call : (capability, attempt) => call(guard.capability(capability), attempt), signal, entry, attempts);
      if (served.routed !== null) {
        servedModel = served.routed.resolved.id;
        if (entry !== undefined) {
          entry.resolved = served.routed.resolved;
          entry.providerName = served.routed.providerName;
        }
      }
      if (entry !== undefined) {
        entry.answered = true;
        const measured = measuredOf(served.result);
        if (measured.usage !== undefined) entry.usage = measured.usage;
        if (measured.imageCount !== undefined) entry.imageCount = measured.imageCount;
      }
      // The answer came (and is priced) before its output guardrails may refuse it; the cache keeps what the caller gets.
      const answered = guard === null ? served.result : await guard.answer(served.result);
      if (cache?.status === 'miss' && entry !== undefined) {
        const measured = () => ({ costMicroUsd: costOfEntries([entry]), usage: entry.usage });
        return cache.keep(answered, measured, () => signal?.aborted !== true && entry.failure === null);
      }
      return answered;
    } catch (error) {
      servedModel = attempts.at(-1)?.model ?? servedModel;
      if (entry !== undefined) entry.failure = (error as { code?: string }).code ?? 'internal_error';
      throw error;
    } finally {
      if (entry !== undefined) entry.latencyMs = this.options.routing === undefined ? performance.now() - started : (attempts.at(-1)?.latencyMs ?? null);
      this.options.onServed?.(servedModel, this.options.routing === undefined ? 1 : attempts.length - before);
    }
  }

  /** The guardrails attached to this call (by key, project or its model), or null when none is. */
  private guard(guardrails: Guardrails, signal: AbortSignal | undefined): CallGuard | null {
    const principal = this.ledger?.principal ?? null;
    const attached = guardrails.attached(principal, this.target.resolved.id);
    if (attached === null) return null;
    const key = principal?.kind === 'key' ? principal : null;
    const metadata = { requestId: this.ledger?.requestId ?? null, keyId: key?.keyId ?? null, projectId: key?.projectId ?? null, model: this.target.resolved.id, capability: this.capabilityName };
    return new CallGuard(this.capabilityName, attached, (verdicts) => this.ledger?.guarded?.(verdicts), { signal, ask: this.options.checker, metadata });
  }

  /** One call to the model's provider, or the routed model's attempts by its plan; `routed` names who served a routed call. */
  private async attempt<R>(
    call: ProviderCall<C, R>,
    signal: AbortSignal | undefined,
    entry: CallEntry | undefined,
    attempts: AttemptRecord[],
  ): Promise<{ result: R; routed: { resolved: ResolvedModel; providerName: string } | null }> {
    const noteIds = (notes: UpstreamNotes) => {
      if (notes.providerRequestId !== undefined) entry?.providerRequestIds.push(notes.providerRequestId);
    };
    const routing = this.options.routing;
    if (routing === undefined) {
      const notes: UpstreamNotes = {};
      try {
        return { result: await call(this.target.capability, { upstreamModel: this.target.resolved.model.upstreamId, notes }), routed: null };
      } finally {
        noteIds(notes);
      }
    }
    const { router, plan, accepts } = routing;
    const capability = this.capabilityName;
    const served = await router.run(
      plan,
      {
        attempt: (_target, deployment, timeoutMs, notes) =>
          call(deployment.provider[capability] as NonNullable<Provider[C]>, { upstreamModel: deployment.upstreamId, timeoutMs, notes }).finally(() => noteIds(notes)),
        usable: (deployment) => usableFor(deployment, capability),
        accepts: (fallback) =>
          fallback.deployments.some((deployment) => usableFor(deployment, capability)) &&
          (!this.pricedFallbacksOnly || isPriced(fallback.resolved.model.entry.pricing)) &&
          accepts(fallback),
        signal,
        tokens: this.estimate.tokens,
      },
      attempts,
    );
    return { result: served.result, routed: { resolved: served.target.resolved, providerName: served.deployment.providerName } };
  }
}
