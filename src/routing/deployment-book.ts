import type { Deployment } from './plan.js';

/** Weight of the newest answer in a deployment's running latency. */
const LATENCY_SMOOTHING = 0.3;
/** A remaining rate limit older than this says nothing any more. */
const RATE_LIMIT_FRESH_MS = 60_000;
/** The least share a deployment keeps, however slow or near its limit: it is still probed now and then. */
const FLOOR = 0.05;
const MINUTE_MS = 60_000;

interface DeploymentState {
  latencyMs: number | null;
  /** Share of its request rate limit the provider last said was left (0…1). */
  remaining: number | null;
  remainingAt: number;
  minute: number;
  requests: number;
  tokens: number;
}

/**
 * What this instance knows of each deployment: its recent latency, the rate limit its provider
 * said was left, and what it took this minute (for its rpm and tpm). Chooses among deployments
 * by weight, or (strategy latency) favouring low latency and room left.
 */
export class DeploymentBook {
  private readonly states = new Map<string, DeploymentState>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  private stateOf(deployment: Deployment): DeploymentState {
    let state = this.states.get(deployment.key);
    if (state === undefined) {
      state = { latencyMs: null, remaining: null, remainingAt: 0, minute: 0, requests: 0, tokens: 0 };
      this.states.set(deployment.key, state);
    }
    const minute = Math.floor(this.now() / MINUTE_MS);
    if (state.minute !== minute) Object.assign(state, { minute, requests: 0, tokens: 0 });
    return state;
  }

  /** Whether the deployment's own rpm and tpm leave room for a request of `tokens` this minute. */
  hasRoom(deployment: Deployment, tokens: number): boolean {
    if (deployment.rpm === undefined && deployment.tpm === undefined) return true;
    const state = this.stateOf(deployment);
    if (deployment.rpm !== undefined && state.requests >= deployment.rpm) return false;
    return deployment.tpm === undefined || state.tokens === 0 || state.tokens + tokens <= deployment.tpm;
  }

  /** An attempt starts on the deployment: counted against its rpm and tpm. */
  started(deployment: Deployment, tokens: number): void {
    const state = this.stateOf(deployment);
    state.requests += 1;
    state.tokens += tokens;
  }

  /** The deployment's answer began after `latencyMs`; `remaining` is the share of its rate limit it said was left, if it did. */
  answered(deployment: Deployment, latencyMs: number, remaining: number | null): void {
    const state = this.stateOf(deployment);
    state.latencyMs = state.latencyMs === null ? latencyMs : state.latencyMs + LATENCY_SMOOTHING * (latencyMs - state.latencyMs);
    if (remaining !== null) {
      state.remaining = remaining;
      state.remainingAt = this.now();
    }
  }

  /**
   * One deployment of `candidates`, at random. By weight alone unless `latencyAware`: the
   * operator's weights are the traffic shares of the healthy deployments (docs/routing.md).
   * Latency-aware (`strategy: latency`), by weight × speed × room: speed is the fastest known
   * latency over this one's (1 while unknown), room the share of the provider's rate limit left
   * (1 while unknown or stale).
   */
  choose(candidates: readonly Deployment[], latencyAware = false): Deployment | undefined {
    if (candidates.length <= 1) return candidates[0];
    const scores = latencyAware ? this.latencyScores(candidates) : candidates.map((deployment) => deployment.weight);
    let pick = this.random() * scores.reduce((sum, score) => sum + score, 0);
    for (const [index, score] of scores.entries()) {
      pick -= score;
      if (pick < 0) return candidates[index];
    }
    return candidates.at(-1);
  }

  private latencyScores(candidates: readonly Deployment[]): number[] {
    const latencies = candidates.map((deployment) => this.states.get(deployment.key)?.latencyMs ?? null);
    const known = latencies.filter((latency): latency is number => latency !== null);
    const fastest = known.length === 0 ? 0 : Math.min(...known);
    const now = this.now();
    return candidates.map((deployment, index) => {
      const latency = latencies[index];
      const speed = latency === null || latency === undefined || latency <= 0 ? 1 : Math.max(FLOOR, fastest / latency);
      const state = this.states.get(deployment.key);
      const fresh = state !== undefined && state.remaining !== null && now - state.remainingAt < RATE_LIMIT_FRESH_MS;
      const room = fresh ? Math.max(FLOOR, state.remaining!) : 1;
      return deployment.weight * speed * room;
    });
  }
}
