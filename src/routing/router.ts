import { setTimeout as sleep } from 'node:timers/promises';
import type { FailureClass } from '../config/index.js';
import { GatewayError } from '../errors/index.js';
import type { AttemptRecord } from '../logs/index.js';
import type { UpstreamNotes } from '../model-api/index.js';
import type { Cooldowns } from './cooldowns.js';
import { DeploymentBook } from './deployment-book.js';
import { failureClassOf, isRetryable, retryAfterMsOf } from './failure.js';
import type { Deployment, RoutePlan, RouteTarget } from './plan.js';

/** What routing reports to the metrics (src/metrics/routing-metrics.ts). */
export interface RoutingObserver {
  attemptEnded(model: string, deployment: string, outcome: AttemptRecord['outcome'], seconds: number): void;
  retried(model: string): void;
  fellBack(from: string, to: string): void;
  cooledDown(model: string, deployment: string): void;
}

/** One routed provider call, as the model-call path hands it over. */
export interface RoutedCall<R> {
  /** One try on a deployment; `timeoutMs` is its deadline for the answer to begin, `notes` where the adapter writes what the provider said. */
  attempt(target: RouteTarget, deployment: Deployment, timeoutMs: number | undefined, notes: UpstreamNotes): Promise<R>;
  /** Whether a deployment's provider serves the call (a public format's native capability may be on some only). */
  usable(deployment: Deployment): boolean;
  /** Whether a fallback model can take the request (a usable deployment, its input modalities). */
  accepts(target: RouteTarget): boolean;
  /** The caller's: once it aborts, nothing more is tried. */
  signal: AbortSignal | undefined;
  /** The request's estimated tokens, counted against a deployment's tpm. */
  tokens: number;
}

export interface Served<R> {
  result: R;
  target: RouteTarget;
  deployment: Deployment;
}

/** The provider's HTTP status of a failed attempt, when it answered with one (kept in the attempt's log detail). */
function upstreamStatusOf(error: unknown): number | undefined {
  return error instanceof GatewayError ? error.upstream?.status : undefined;
}

/** The deployment and time the last failure's provider asked the retry for, once. */
function takeRetryOn(progress: Progress): Progress['retryOn'] {
  const { retryOn } = progress;
  progress.retryOn = undefined;
  return retryOn;
}

/** The wait before retry `n` (1, 2, …): `backoffMs` doubled each time, with ±50 % jitter. */
function backoff(backoffMs: number, retry: number, random: () => number): number {
  return backoffMs * 2 ** (retry - 1) * (0.5 + random());
}

/** Where one request stands in its plan: the last failure and when attempts must stop. */
interface Progress {
  readonly deadline: number;
  lastError: unknown;
  lastClass: FailureClass | null;
  /** The deployment whose provider said to retry after a wait short enough to take (Retry-After ≤ maxRetryWaitMs), and when. */
  retryOn: { deployment: Deployment; at: number } | undefined;
}

/**
 * Serves routed models (docs/routing.md): picks a deployment, retries a retryable failure on
 * another one (or on the same one after the wait its provider asked for, when short enough),
 * then falls back to the next model, all before
 * the answer begins — a call resolves when the answer begins (a stream's first frame), so
 * nothing after the first byte is ever retried. Plans are swapped whole on reload: a request
 * keeps the plan it started with.
 */
export class Router {
  private plans: ReadonlyMap<string, RoutePlan> = new Map();

  constructor(
    private readonly cooldowns: Cooldowns,
    private readonly observer: RoutingObserver,
    private readonly book = new DeploymentBook(),
    private readonly random: () => number = Math.random,
  ) {}

  update(plans: ReadonlyMap<string, RoutePlan>): void {
    this.plans = plans;
  }

  /** Every routed model's deployments, each with whether it is cooling down now (the health page, `modelgate status`). */
  async deploymentStates(): Promise<{ model: string; deployment: string; provider: string; weight: number; cooling: boolean }[]> {
    const deployments = [...this.plans.values()].flatMap((plan) => plan.primary.deployments.map((deployment) => ({ model: plan.primary.resolved.id, deployment })));
    const cooling = await this.cooldowns.cooling(deployments.map(({ deployment }) => deployment.key));
    return deployments.map(({ model, deployment }) => ({ model, deployment: deployment.name, provider: deployment.providerName, weight: deployment.weight, cooling: cooling.has(deployment.key) }));
  }

  /** The plan of a catalog id, when the configuration routes it. */
  planFor(modelId: string): RoutePlan | undefined {
    return this.plans.size === 0 ? undefined : this.plans.get(modelId);
  }

  /** Makes the call by the plan; every try is appended to `attempts` (numbered on from what it holds). Rejects with the last failure. */
  async run<R>(plan: RoutePlan, call: RoutedCall<R>, attempts: AttemptRecord[]): Promise<Served<R>> {
    const progress: Progress = { deadline: Date.now() + (plan.totalMs ?? Number.POSITIVE_INFINITY), lastError: undefined, lastClass: null, retryOn: undefined };
    const targets = [plan.primary, ...plan.fallbacks];
    for (const [index, target] of targets.entries()) {
      const last = index === targets.length - 1;
      if (index > 0) {
        // Nothing failed on the model before (all cooling down), or it failed in a class the plan falls back on.
        const fallsBack = progress.lastClass === null ? progress.lastError === undefined : plan.fallbackOn.has(progress.lastClass);
        if (!fallsBack) break;
        if (!call.accepts(target)) continue;
        this.observer.fellBack(plan.primary.resolved.id, target.resolved.id);
      }
      const served = await this.tryTarget(plan, target, index === 0 ? 1 + plan.retries : 1, last, call, attempts, progress);
      if (served !== undefined) return served;
      if (progress.lastError !== undefined && progress.lastClass === null) break;
    }
    throw progress.lastError ?? new GatewayError('provider_error', 'Every deployment of the model is cooling down after failures. Try again later.', { retryable: true });
  }

  /** Up to `tries` attempts on the deployments of one model; undefined when none answered. */
  private async tryTarget<R>(
    plan: RoutePlan,
    target: RouteTarget,
    tries: number,
    lastTarget: boolean,
    call: RoutedCall<R>,
    attempts: AttemptRecord[],
    progress: Progress,
  ): Promise<Served<R> | undefined> {
    const tried = new Set<string>();
    progress.retryOn = undefined;
    for (let retry = 0; retry < tries; retry += 1) {
      if (retry > 0 && (progress.lastClass === null || !isRetryable(progress.lastClass))) return undefined;
      // A provider that said when to come back (within maxRetryWaitMs) gets the retry, after that wait.
      const retryOn = takeRetryOn(progress);
      const deployment = retryOn?.deployment ?? (await this.pick(plan, target, call, tried, lastTarget));
      if (deployment === undefined) return undefined;
      if (retry > 0) {
        const wait = retryOn !== undefined ? retryOn.at - Date.now() : backoff(plan.backoffMs, retry, this.random);
        if (Date.now() + wait >= progress.deadline) return undefined;
        if (wait > 0 && !(await this.waited(wait, call.signal))) return undefined;
        this.observer.retried(target.resolved.id);
      }
      if (Date.now() >= progress.deadline) return undefined;
      tried.add(deployment.key);
      const result = await this.attempt(plan, target, deployment, call, attempts, progress);
      if (result !== undefined) return { result: result.value, target, deployment };
      if (call.signal?.aborted === true) throw progress.lastError;
    }
    return undefined;
  }

  /** Waits before a retry; false when the caller went away meanwhile. */
  private async waited(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
    try {
      await sleep(ms, undefined, signal === undefined ? undefined : { signal });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * A deployment not cooling down and with room in its rpm/tpm, one this request has not tried
   * if there is one. When every deployment of the last model left is cooling down, the best of
   * them is tried all the same: an answer may come, and a refusal says no more than silence.
   */
  private async pick<R>(plan: RoutePlan, target: RouteTarget, call: RoutedCall<R>, tried: ReadonlySet<string>, lastResort: boolean): Promise<Deployment | undefined> {
    const deployments = target.deployments.filter((deployment) => call.usable(deployment));
    if (deployments.length === 0) return undefined;
    const cooling = await this.cooldowns.cooling(deployments.map((deployment) => deployment.key));
    let candidates = deployments.filter((deployment) => !cooling.has(deployment.key) && this.book.hasRoom(deployment, call.tokens));
    if (candidates.length === 0 && lastResort) candidates = [...deployments];
    const untried = candidates.filter((deployment) => !tried.has(deployment.key));
    return this.book.choose(untried.length > 0 ? untried : candidates, plan.latencyAware);
  }

  /** One try; its outcome is recorded, a retryable failure counted towards the deployment's cooldown. */
  private async attempt<R>(
    plan: RoutePlan,
    target: RouteTarget,
    deployment: Deployment,
    call: RoutedCall<R>,
    attempts: AttemptRecord[],
    progress: Progress,
  ): Promise<{ value: R } | undefined> {
    this.book.started(deployment, call.tokens);
    const remainingMs = progress.deadline === Number.POSITIVE_INFINITY ? undefined : Math.max(1, progress.deadline - Date.now());
    const timeoutMs = plan.firstByteMs === undefined ? remainingMs : Math.min(plan.firstByteMs, remainingMs ?? plan.firstByteMs);
    const notes: UpstreamNotes = {};
    const started = performance.now();
    const record = (outcome: AttemptRecord['outcome'], upstreamStatus?: number): number => {
      const latencyMs = Math.round(performance.now() - started);
      attempts.push({
        attempt: attempts.length + 1,
        model: target.resolved.id,
        deployment: deployment.name,
        provider: deployment.providerName,
        outcome,
        latencyMs,
        ...(upstreamStatus === undefined ? {} : { upstreamStatus }),
      });
      this.observer.attemptEnded(target.resolved.id, deployment.name, outcome, latencyMs / 1000);
      return latencyMs;
    };
    try {
      const value = await call.attempt(target, deployment, timeoutMs, notes);
      const latencyMs = record('ok');
      this.book.answered(deployment, latencyMs, notes.rateLimitShare ?? null);
      this.cooldowns.succeeded(deployment.key);
      return { value };
    } catch (error) {
      record(error instanceof GatewayError ? error.code : 'internal_error', upstreamStatusOf(error));
      progress.lastError = error;
      progress.lastClass = call.signal?.aborted === true ? null : failureClassOf(error);
      if (progress.lastClass !== null && isRetryable(progress.lastClass)) {
        // A wait the plan takes is the retry's, on this deployment; a longer one keeps it out that long.
        const retryAfterMs = retryAfterMsOf(error);
        const waitable = retryAfterMs > 0 && retryAfterMs <= plan.maxRetryWaitMs && Date.now() + retryAfterMs < progress.deadline;
        if (waitable) progress.retryOn = { deployment, at: Date.now() + retryAfterMs };
        if (await this.cooldowns.failed(deployment.key, target.cooldown, waitable ? 0 : retryAfterMs)) this.observer.cooledDown(target.resolved.id, deployment.name);
      }
      return undefined;
    }
  }
}
