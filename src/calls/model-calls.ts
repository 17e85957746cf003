import type { Catalog, ModelMode, ResolvedModel } from '../catalog/index.js';
import { GatewayError, withArticle } from '../errors/index.js';
import { assertModelAllowed, type Principal } from '../keys/index.js';
import type { Admission, Limiter, UsageEstimate } from '../limits/index.js';
import type { MediaSummary, RequestRecord } from '../logs/index.js';
import type { Provider } from '../providers/index.js';
import { inspectMessages } from './input-policy.js';

/** The provider capabilities a model call can use. */
export type Capability = 'chat' | 'messages' | 'embeddings' | 'images' | 'speech' | 'transcription';

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
}

/** The model and provider capability a call resolved to. */
export interface CallTarget<C extends Capability> {
  resolved: ResolvedModel;
  provider: Provider;
  capability: NonNullable<Provider[C]>;
}

/** A provider call as made by `CheckedCall.invoke`: the capability and the upstream model to ask for. */
export type ProviderCall<C extends Capability, R> = (capability: NonNullable<Provider[C]>, upstreamModel: string) => Promise<R>;

/**
 * A call that passed resolution, the allow-list and the input policy. Only through it can a
 * provider be called, so no path reaches a provider with input the policy has not seen.
 */
export class CheckedCall<C extends Capability> {
  constructor(
    readonly target: CallTarget<C>,
    /** The media the messages carry, for the request log (null: none, or no messages). */
    readonly media: MediaSummary | null,
    private readonly record: RequestRecord | undefined,
  ) {}

  /**
   * The same checked call through another capability of its provider (a public format the
   * provider speaks natively), or undefined when the provider has none.
   */
  through<K extends Capability>(capability: K): CheckedCall<K> | undefined {
    const own = this.target.provider[capability];
    if (own === undefined) return undefined;
    return new CheckedCall({ resolved: this.target.resolved, provider: this.target.provider, capability: own as NonNullable<Provider[K]> }, this.media, this.record);
  }

  /**
   * Makes the provider call, timing it to its first answer (a stream's first frame) for the
   * request log. The one place a model call reaches a provider: deployments, retries and
   * fallbacks before the first byte belong here.
   */
  async invoke<R>(call: ProviderCall<C, R>): Promise<R> {
    const started = performance.now();
    const result = await call(this.target.capability, this.target.resolved.model.upstreamId);
    if (this.record !== undefined) this.record.upstreamLatencyMs = performance.now() - started;
    return result;
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
    const provider = this.providers.get(resolved.model.provider);
    const capability = provider[request.capability];
    if (capability === undefined) {
      throw new GatewayError(
        'model_mode_mismatch',
        `The model "${request.model}" cannot be used on this endpoint: its provider does not offer it. Pick ${withArticle(request.mode)} model from GET /v1/models.`,
        { param },
      );
    }
    const media =
      request.messages === undefined
        ? null
        : inspectMessages(request.messages, { acceptsRemoteImageUrls: provider.acceptsRemoteImageUrls, inputModalities: resolved.model.entry.input_modalities });
    if (record !== undefined && request.messages !== undefined) record.media = media;
    return new CheckedCall({ resolved, provider, capability: capability as NonNullable<Provider[C]> }, media, record);
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
    const admission = await this.reserve(principal, estimateOf(call), request.record);
    return { call, admission };
  }
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
