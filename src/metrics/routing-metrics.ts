import { Counter, Histogram, type Registry } from './registry.js';

const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/**
 * The metrics of routing (docs/routing.md, docs/observability.md): per deployment, how long
 * its attempts took to begin answering and how they ended; retries, fallbacks and cooldowns.
 * Labels are bounded: models and deployments come from the configuration.
 */
export class RoutingMetrics {
  private readonly attempts: Counter;
  private readonly latency: Histogram;
  private readonly retries: Counter;
  private readonly fallbacks: Counter;
  private readonly cooldowns: Counter;

  constructor(registry: Registry) {
    this.attempts = registry.register(
      new Counter('modelgate_deployment_attempts_total', 'Attempts of routed calls by model, deployment and outcome (ok or the error code).', ['model', 'deployment', 'outcome']),
    );
    this.latency = registry.register(
      new Histogram('modelgate_deployment_latency_seconds', 'Time until an attempt began its answer (a stream: its first frame) or failed, by model and deployment.', ['model', 'deployment'], ATTEMPT_BUCKETS),
    );
    this.retries = registry.register(new Counter('modelgate_routing_retries_total', 'Retries of a routed model after a retryable failure.', ['model']));
    this.fallbacks = registry.register(new Counter('modelgate_routing_fallbacks_total', 'Requests that fell back from a model to another.', ['model', 'fallback']));
    this.cooldowns = registry.register(
      new Counter('modelgate_deployment_cooldowns_total', 'Cooldowns started (failures in the window, or a provider Retry-After), by model and deployment.', ['model', 'deployment']),
    );
  }

  attemptEnded(model: string, deployment: string, outcome: string, seconds: number): void {
    this.attempts.inc({ model, deployment, outcome });
    this.latency.observe({ model, deployment }, seconds);
  }

  retried(model: string): void {
    this.retries.inc({ model });
  }

  fellBack(model: string, fallback: string): void {
    this.fallbacks.inc({ model, fallback });
  }

  cooledDown(model: string, deployment: string): void {
    this.cooldowns.inc({ model, deployment });
  }
}
