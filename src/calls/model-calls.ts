import type { Catalog, ModelMode, ResolvedModel } from '../catalog/index.js';
import { GatewayError, withArticle } from '../errors/index.js';
import { assertModelAllowed, type Principal } from '../keys/index.js';
import type { Admission, Limiter, UsageEstimate } from '../limits/index.js';
import type { AttemptRecord, MediaSummary, RequestRecord } from '../logs/index.js';
import type { Provider } from '../model-api/index.js';
import type { RoutePlan, Router, RouteTarget } from '../routing/index.js';
import { inspectMessages } from './input-policy.js';

/** The provider capabilities a model call can use. */
export type Capability = 'chat' | 'responses' | 'messages' | 'embeddings' | 'images' | 'speech' | 'transcription';

/** What one model call asks for, as a format's request decoder or a domain (VETTING, agents) states it. */
export interface CallRequest<C extends Capability> {
  /** The mode the endpoint serves: a model of another mode is `model_mode_mismatch`. */
  mode: ModelMode;
  /** A catalog id or alias. */
  model: string;
  capability: C;
  providerHint?: string | undefined;
  /** The body field that named the model, for the errors (default `model`). */
  param?: string;
  /**
   * The caller whose key's allowedModels the model must be in; omitted when the gateway's
   * operator or an agent's author chose the model (the internal verification model, an agent node).
   */
  allowedFor?: Principal;
  /** Chat messages, checked by the input policy against the model before anything is reserved. */
  messages?: readonly unknown[];
  /** The request's log record: filled with the model, the provider and the media when given. */
  record?: RequestRecord;
  /** Told which model served the call (a fallback's id after a fallback) and after how many attempts, failed calls too. */
  onServed?: (model: string, attempts: number) => void;
}

/** The model and provider capability a call resolved to. */
export interface CallTarget<C extends Capability> {
  resolved: ResolvedModel;
  provider: Provider;
  capability: NonNullable<Provider[C]>;
}

/** What one attempt of a call sends besides the caller's body: the upstream model, and the attempt's deadline when routing sets one. */
export interface UpstreamAttempt {
  upstreamModel: string;
  timeoutMs?: number | undefined;
}

/** A provider call as made by `CheckedCall.invoke`: the capability, and the attempt's fields to add to the call. */
export type ProviderCall<C extends Capability, R> = (capability: NonNullable<Provider[C]>, attempt: UpstreamAttempt) => Promise<R>;

/** What a checked call needs to be routed: the router, the model's plan, and the checks a fallback model must pass. */
interface Routing {
  router: Router;
  plan: RoutePlan;
  /** Whether a fallback model takes the call's input (its modalities). */
  accepts(target: RouteTarget): boolean;
}

/**
 * A call that passed resolution, the allow-list and the input policy. Only through it can a
 * provider be called, so no path reaches a provider with input the policy has not seen.
 */
export class CheckedCall<C extends Capability> {
  constructor(
    readonly target: CallTarget<C>,
    /** The media the messages carry, for the request log (null: none, or no messages). */
    readonly media: MediaSummary | null,
    private readonly request: Pick<CallRequest<C>, 'capability' | 'record' | 'onServed'>,
    private readonly routing?: Routing,
    /** The reserved estimate's tokens, counted against a routed deployment's tpm (shared with `through`'s calls). */
    private readonly estimate = { tokens: 0 },
  ) {}

  /** Notes the reserved estimate (ModelCalls.admit, or a route that reserves itself). */
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
    return new CheckedCall(target, this.media, { ...this.request, capability }, this.routing, this.estimate);
  }

  /**
   * Makes the provider call, timing it to its first answer (a stream's first frame) for the
   * request log. The one place a model call reaches a provider: a routed model's deployments,
   * retries and fallbacks happen here, before the first byte (docs/routing.md). `signal` is
   * the caller's: once it aborts, nothing more is tried.
   */
  async invoke<R>(call: ProviderCall<C, R>, signal?: AbortSignal): Promise<R> {
    const { record, onServed } = this.request;
    if (this.routing === undefined) {
      const started = performance.now();
      try {
        const result = await call(this.target.capability, { upstreamModel: this.target.resolved.model.upstreamId });
        if (record !== undefined) record.upstreamLatencyMs = performance.now() - started;
        return result;
      } finally {
        onServed?.(this.target.resolved.id, 1);
      }
    }
    // A request that calls its model several times (VETTING's drafts) lists every attempt of every call.
    const attempts: AttemptRecord[] = record === undefined ? [] : (record.attempts ??= []);
    const before = attempts.length;
    const { router, plan, accepts } = this.routing;
    const capability = this.request.capability;
    try {
      const served = await router.run(
        plan,
        {
          attempt: (_target, deployment, timeoutMs) => call(deployment.provider[capability] as NonNullable<Provider[C]>, { upstreamModel: deployment.upstreamId, timeoutMs }),
          usable: (deployment) => usableFor(deployment, capability),
          accepts: (fallback) => fallback.deployments.some((deployment) => usableFor(deployment, capability)) && accepts(fallback),
          signal,
          requestId: record?.requestId,
          tokens: this.estimate.tokens,
        },
        attempts,
      );
      if (record !== undefined) {
        record.resolvedModel = served.target.resolved.id;
        record.provider = served.deployment.providerName;
        record.upstreamLatencyMs = attempts.at(-1)?.latencyMs ?? null;
      }
      return served.result;
    } finally {
      onServed?.(attempts.at(-1)?.model ?? this.target.resolved.id, attempts.length - before);
    }
  }
}

/**
 * The one model-call path: resolve → allow-list → input policy → reserve → provider call.
 * Every endpoint that calls a model (chat, embeddings, images, audio, VETTING, agents' llm
 * and image nodes) goes through it, so a rule added to one step holds for all of them.
 * Usage and cost are settled with `settlementOf` (settlement.ts). Built once at start-up.
 */
export class ModelCalls {
  constructor(
    private readonly catalog: Pick<Catalog, 'resolve'>,
    private readonly providers: { get(name: string): Provider },
    private readonly limiter: Limiter,
    private readonly router?: Router,
  ) {}

  /** Resolves, checks the allow-list, finds the capability and applies the input policy. Throws the GatewayError; nothing is reserved. */
  check<C extends Capability>(request: CallRequest<C>): CheckedCall<C> {
    const { record } = request;
    const param = request.param ?? 'model';
    if (record !== undefined) record.requestedModel = request.model;
    const resolved = this.catalog.resolve(request.model, { mode: request.mode, param, providerHint: request.providerHint });
    if (request.allowedFor !== undefined) allowed(request.allowedFor, resolved, param);
    if (record !== undefined) {
      record.resolvedModel = resolved.id;
      record.provider = resolved.model.provider;
    }
    const plan = this.router?.planFor(resolved.id);
    // A routed model is served by its deployments (their capabilities checked when the plan was made).
    const provider = plan?.primary.deployments[0]?.provider ?? this.providers.get(resolved.model.provider);
    const capability = provider[request.capability];
    if (capability === undefined) {
      throw new GatewayError(
        'model_mode_mismatch',
        `The model "${request.model}" cannot be used on this endpoint: its provider does not offer it. Pick ${withArticle(request.mode)} model from GET /v1/models.`,
        { param },
      );
    }
    const acceptsRemoteImageUrls = plan === undefined ? provider.acceptsRemoteImageUrls : plan.primary.deployments.every((deployment) => deployment.provider.acceptsRemoteImageUrls);
    const inspect = (target: { model: ResolvedModel['model'] }, remoteUrls: boolean) =>
      request.messages === undefined ? null : inspectMessages(request.messages, { acceptsRemoteImageUrls: remoteUrls, inputModalities: target.model.entry.input_modalities });
    const media = inspect(resolved, acceptsRemoteImageUrls);
    if (record !== undefined && request.messages !== undefined) record.media = media;
    const target = { resolved, provider, capability: capability as NonNullable<Provider[C]> };
    if (plan === undefined) return new CheckedCall(target, media, request);
    // A fallback was chosen by the operator: the caller's allow-list does not apply to it, its input rules do.
    const accepts = (fallback: RouteTarget) => {
      try {
        inspect(fallback.resolved, fallback.deployments.every((deployment) => deployment.provider.acceptsRemoteImageUrls));
        return true;
      } catch {
        return false;
      }
    };
    return new CheckedCall(target, media, request, { router: this.router!, plan, accepts });
  }

  /** Reserves the estimate against the principal's limits (a 429 when nothing is left); kept in the record when given. */
  async reserve(principal: Principal, estimate: UsageEstimate, record?: RequestRecord): Promise<Admission> {
    const admission = await this.limiter.admit(principal, estimate);
    if (record !== undefined) record.admission = admission;
    return admission;
  }

  /** The steps of a request that makes one model call: check, then reserve its estimate (made from the checked call). */
  async admit<C extends Capability>(
    principal: Principal,
    request: CallRequest<C>,
    estimateOf: (call: CheckedCall<C>) => UsageEstimate,
  ): Promise<{ call: CheckedCall<C>; admission: Admission }> {
    const call = this.check(request);
    const estimate = estimateOf(call);
    const admission = await this.reserve(principal, estimate, request.record);
    call.reserved(estimate);
    return { call, admission };
  }
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

/** The key's allow-list, with the error naming the body field that chose the model. */
function allowed(principal: Principal, resolved: ResolvedModel, param: string): void {
  try {
    assertModelAllowed(principal, resolved.requested, resolved.id);
  } catch (error) {
    if (error instanceof GatewayError && error.param !== param) throw new GatewayError(error.code, error.message, { param });
    throw error;
  }
}
