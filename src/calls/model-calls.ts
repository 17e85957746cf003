import type { CacheQuery, CacheTicket, ResponseCache } from '../cache/index.js';
import { isPriced, type Catalog, type ModelMode, type ResolvedModel } from '../catalog/index.js';
import { GatewayError, withArticle } from '../errors/index.js';
import type { UpstreamObjectKind, UpstreamObjectRef } from '../formats/index.js';
import { assertModelAllowed, projectOf, type Principal } from '../keys/index.js';
import { heldTo, type Admission, type BudgetHold, type Limiter, type UsageEstimate } from '../limits/index.js';
import type { MediaSummary } from '../logs/index.js';
import type { Provider } from '../model-api/index.js';
import type { Router, RouteTarget } from '../routing/index.js';
import type { CheckerAsk, Guardrails } from '../guardrails/index.js';
import { CheckedCall, type CallLedger, type Capability, type ServedListener } from './checked-call.js';
import { inspectMessages } from './input-policy.js';
import { ProjectPolicies } from './project-policies.js';
import { RequestCall, type FinishedRequestObserver, type RequestStart } from './request-call.js';

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
  /** What the call is for, when a request makes several (`draft`, `verification`, `node:<id>`): the record lists each. */
  purpose?: string;
  /** Told which model served the call (a fallback's id after a fallback) and after how many attempts, failed calls too. */
  onServed?: ServedListener;
  /** false for the gateway's own check of a call already guarded (VETTING's verification): no guardrail runs on it. */
  guarded?: boolean;
}

/** The budgets above each request (src/budgets), as the call path asks for them. */
export interface CallBudgets {
  holdsFor(principal: Principal, endUser: string | null): BudgetHold[];
  /** Told after a request under `holds` settled (alerts). Never rejects. */
  settled(holds: readonly BudgetHold[]): Promise<void>;
  /** An end user's id as a project that hashes them keeps it. */
  hashed(endUser: string): string;
}

/** Where a checked call's facts go in its request's record as it is checked. */
export interface CheckedFacts {
  requested(model: string): void;
  resolved(resolved: ResolvedModel): void;
  media(media: MediaSummary | null): void;
}

/**
 * The one model-call path: resolve → allow-list → input policy → reserve → route and invoke
 * → settle → cost → the finished record. Every endpoint that calls a model (chat, Messages,
 * Responses, embeddings, images, audio, VETTING, agents' llm and image nodes) goes through
 * it, so a rule added to one step holds for all of them: a request begins a RequestCall,
 * which owns its record until the response ended. Built once at start-up.
 */
export class ModelCalls {
  constructor(
    private readonly catalog: Pick<Catalog, 'resolve'>,
    private readonly providers: { get(name: string): Provider },
    private readonly limiter: Limiter,
    private readonly router?: Router,
    observer?: FinishedRequestObserver,
    private readonly guardrails?: Guardrails,
    private readonly cache?: ResponseCache,
    readonly policies: ProjectPolicies = new ProjectPolicies(),
    private readonly budgets?: CallBudgets,
  ) {
    if (observer !== undefined) this.observers.push(observer);
  }

  /** The request's use of the response cache (docs/caching.md); null when no cache policy applies to it. */
  async cacheTicket(query: CacheQuery): Promise<CacheTicket | null> {
    if (this.cache === undefined) return null;
    const { keyId, projectId } = query.caller;
    const guarded = this.guardrails?.attached(keyId === null || projectId === null ? { kind: 'anonymous' } : { kind: 'key', keyId, projectId }, query.model);
    return this.cache.ticket(guarded == null ? query : { ...query, guardrails: guarded.map((guardrail) => guardrail.policy.name).join(',') });
  }

  private readonly observers: FinishedRequestObserver[] = [];

  /** Tells `observer` of every request finished from now on. */
  observe(observer: FinishedRequestObserver): void {
    this.observers.push(observer);
  }

  /** The call of one request: it keeps the request's record as the request goes, and finishes it when the response ended. */
  begin(start: RequestStart): RequestCall {
    return new RequestCall(start, this, this.observers);
  }

  /**
   * Resolves, checks the allow-list, finds the capability and applies the input policy.
   * Throws the GatewayError; nothing is reserved. A call outside a request (a start-up check)
   * has no ledger and no facts.
   */
  check<C extends Capability>(request: CallRequest<C>, ledger?: CallLedger, facts?: CheckedFacts): CheckedCall<C> {
    const param = request.param ?? 'model';
    facts?.requested(request.model);
    const resolved = this.catalog.resolve(request.model, { mode: request.mode, param, providerHint: request.providerHint });
    if (request.allowedFor !== undefined) allowed(request.allowedFor, resolved, param);
    facts?.resolved(resolved);
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
    const target = { resolved, provider, capability: capability as NonNullable<Provider[C]> };
    const inspected = (messages: readonly unknown[] | undefined): CheckedCall<C> => {
      const inspect = (model: ResolvedModel['model'], remoteUrls: boolean) =>
        messages === undefined ? null : inspectMessages(messages, { acceptsRemoteImageUrls: remoteUrls, inputModalities: model.entry.input_modalities });
      const media = inspect(resolved.model, plan === undefined ? provider.acceptsRemoteImageUrls : plan.primary.deployments.every((deployment) => deployment.provider.acceptsRemoteImageUrls));
      if (messages !== undefined) facts?.media(media);
      const guardrails = request.guarded === false ? undefined : this.guardrails;
      const options = { purpose: request.purpose ?? null, onServed: request.onServed, inspect: inspected, param, guardrails, checker: guardrails === undefined ? undefined : this.checker(ledger) };
      if (plan === undefined) return new CheckedCall(target, media, request.capability, ledger, options);
      // A fallback was chosen by the operator: the caller's allow-list does not apply to it, its input rules do.
      const accepts = (fallback: RouteTarget) => {
        try {
          inspect(fallback.resolved.model, fallback.deployments.every((deployment) => deployment.provider.acceptsRemoteImageUrls));
          return true;
        } catch {
          return false;
        }
      };
      return new CheckedCall(target, media, request.capability, ledger, { ...options, routing: { router: this.router!, plan, accepts } });
    };
    return inspected(request.messages);
  }

  /**
   * The model calls of model-based guardrails (docs/guardrails.md#model-checks): a chat call of
   * the catalog model the guardrail names, made through this path (resolved, routed, listed
   * and priced in the ledger's record under the purpose `guardrail:<name>`), not guarded itself.
   * Without a ledger (a dry run) the call is made and recorded nowhere.
   */
  checker(ledger?: CallLedger): CheckerAsk {
    return (model, purpose, body, signal) =>
      this.check({ mode: 'chat', model, capability: 'chat', purpose, guarded: false }, ledger).invoke(
        (chat, attempt) => chat.complete({ ...attempt, body, signal, requestId: ledger?.requestId ?? 'guardrail-dry-run' }),
        signal,
      );
  }

  /**
   * A key with a monthly cost cap is never served by a model whose cost cannot be computed (a fallback neither):
   * counted as free, it would let the cap be overrun. Allowed when the key or its project says so.
   */
  assertPriced(principal: Principal, calls: readonly CheckedCall<Capability>[]): void {
    if (principal.kind !== 'key' || principal.limits.monthlyCostUsd === null) return;
    if (principal.allowUnpriced === true || this.policies.of(principal.projectId).allowUnpriced) return;
    const unpriced = calls.find((call) => !isPriced(call.pricing));
    if (unpriced === undefined) {
      // Nor by a fallback the routing would pick: it is skipped as if it could not take the input.
      for (const call of calls) call.requirePricedFallbacks();
      return;
    }
    const { id } = unpriced.target.resolved;
    throw new GatewayError(
      'model_unpriced',
      `The model "${id}" has no price the gateway can compute a cost from, and this key has a monthly cost cap that could not count it. ` +
        `Use a priced model (GET /v1/models shows each pricing), or ask an administrator to give "${id}" a price (catalog.models[].pricing in the config) ` +
        `or to allow unpriced models for this key (allow_unpriced) or its project (projects.<id>.allowUnpriced).`,
      { param: unpriced.param },
    );
  }

  /**
   * On native pass-through, objects of the vendor account the body names (a conversation, a
   * stored prompt, files, vector stores, containers, items) are the operator's: refused unless
   * the gateway made them for this key (`made`) or the key's project is granted them.
   */
  assertGranted(principal: Principal, refs: readonly UpstreamObjectRef[], made: ReadonlySet<string> = new Set()): void {
    const policy = this.policies.of(projectOf(principal));
    const refused = refs.find((ref) => !made.has(ref.id) && !policy.grants(ref.kind, ref.id));
    if (refused === undefined) return;
    throw new GatewayError(
      'upstream_object_not_granted',
      `${refused.param} names "${refused.id}", one of the ${OBJECT_NAMES[refused.kind]} held in the gateway's own account with the model's vendor, and this key's project is not granted it. ` +
        `Send the content itself instead, or ask an administrator to grant the project that id (projects.<id>.upstreamObjects.${refused.kind} in the config).`,
      { param: refused.param },
    );
  }

  /**
   * Reserves the estimate against the principal's limits and every budget above the request
   * (its key, project, team and end user): one reservation, a 429 when anything has nothing left.
   */
  reserve(principal: Principal, estimate: UsageEstimate, endUser: string | null = null): Promise<Admission> {
    return this.admitWithBudgets(principal, estimate, endUser);
  }

  /** The end user's id as the request log keeps it: hashed when the key's project says so. */
  storedEndUser(principal: Principal | null, endUser: string): string {
    if (principal === null || principal.kind !== 'key' || this.budgets === undefined) return endUser;
    return this.policies.of(principal.projectId).hashEndUsers ? this.budgets.hashed(endUser) : endUser;
  }

  private async admitWithBudgets(principal: Principal, estimate: UsageEstimate, endUser: string | null): Promise<Admission> {
    const holds = this.budgets?.holdsFor(principal, endUser) ?? [];
    const admission = await this.limiter.admit(principal, estimate, holds);
    if (holds.length === 0 || this.budgets === undefined) return admission;
    const budgets = this.budgets;
    // Once settled, what the budgets spent may have reached an alert threshold.
    return {
      headers: admission.headers,
      reserved: admission.reserved,
      settle: async (actual) => {
        await admission.settle(actual);
        void budgets.settled(holds);
      },
    };
  }

  /**
   * Reserves one model call of a request already counted against the per-minute limit (an
   * agent's node) against the key's daily token and monthly cost caps only: calls known only
   * as the request runs each reserve before they are made, so neither a long run nor
   * concurrent runs overshoot a cap.
   */
  reserveCaps(principal: Principal, estimate: UsageEstimate, endUser: string | null = null): Promise<Admission> {
    return this.admitWithBudgets(heldTo(principal, 'caps'), estimate, endUser);
  }
}

const OBJECT_NAMES: { readonly [K in UpstreamObjectKind]: string } = {
  conversations: 'conversations',
  prompts: 'stored prompts',
  items: 'conversation items',
  vectorStores: 'vector stores',
  files: 'uploaded files',
  containers: 'containers',
  cachedContents: 'context caches',
};

/** The key's allow-list, with the error naming the body field that chose the model. */
function allowed(principal: Principal, resolved: ResolvedModel, param: string): void {
  try {
    assertModelAllowed(principal, resolved.requested, resolved.id);
  } catch (error) {
    if (error instanceof GatewayError && error.param !== param) throw new GatewayError(error.code, error.message, { param });
    throw error;
  }
}
