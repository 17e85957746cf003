import type { ProviderFault } from '../errors/index.js';
import { providerAnswered, providerFaultOf } from './shared/upstream-errors.js';
import type { Provider } from '../model-api/index.js';

/** How often one provider's fault is written to the process log at most, and how long it must be unreachable first. */
export const FAULT_NOTICE_INTERVAL_MS = 60_000;

/** What the operator is told of a provider fault (never a credential: the provider's name, the fault, counts and times). */
export interface ProviderFaultNotice {
  provider: string;
  fault: ProviderFault;
  /** Calls that failed so since the fault began. */
  failures: number;
  since: Date;
}

/** Where faults go: every one is counted, a notice is written at most once a minute per provider. */
export interface ProviderFaultSink {
  count(provider: string, fault: ProviderFault): void;
  notify(notice: ProviderFaultNotice): void;
}

/** A provider's state as `modelgate status` shows it. */
export interface ProviderHealthView {
  state: 'ok' | 'failing';
  fault: ProviderFault | null;
  since: string | null;
  last_failure_at: string | null;
  failures: number;
}

interface FaultState {
  fault: ProviderFault;
  since: number;
  last: number;
  failures: number;
}

/**
 * Which providers refuse the gateway's credential or cannot be reached, seen from the outcome
 * of each call. A caller only gets a neutral 502; this is how the operator learns of it. A
 * refused credential is told at once, an unreachable provider once it has been unreachable for
 * a minute (a single dropped connection is no news); then at most once a minute while it lasts.
 * Any answer from the provider ends the fault.
 */
export class ProviderHealth {
  private readonly faults = new Map<string, FaultState>();
  private readonly lastNotice = new Map<string, number>();

  constructor(
    private readonly sink: ProviderFaultSink,
    private readonly now: () => number = Date.now,
  ) {}

  /** The outcome of one call: its error, or undefined when it succeeded. */
  observe(provider: string, error: unknown): void {
    const fault = error === undefined ? undefined : providerFaultOf(error);
    if (fault !== undefined) this.fail(provider, fault);
    else if (error === undefined || providerAnswered(error)) this.faults.delete(provider);
  }

  view(provider: string): ProviderHealthView {
    const state = this.faults.get(provider);
    if (state === undefined) return { state: 'ok', fault: null, since: null, last_failure_at: null, failures: 0 };
    return {
      state: 'failing',
      fault: state.fault,
      since: new Date(state.since).toISOString(),
      last_failure_at: new Date(state.last).toISOString(),
      failures: state.failures,
    };
  }

  private fail(provider: string, fault: ProviderFault): void {
    const now = this.now();
    let state = this.faults.get(provider);
    if (state === undefined || state.fault !== fault) {
      state = { fault, since: now, last: now, failures: 0 };
      this.faults.set(provider, state);
    }
    state.failures += 1;
    state.last = now;
    this.sink.count(provider, fault);
    const due = fault === 'credential_refused' || now - state.since >= FAULT_NOTICE_INTERVAL_MS;
    const lastNotice = this.lastNotice.get(provider);
    if (!due || (lastNotice !== undefined && now - lastNotice < FAULT_NOTICE_INTERVAL_MS)) return;
    this.lastNotice.set(provider, now);
    this.sink.notify({ provider, fault, failures: state.failures, since: new Date(state.since) });
  }
}

/**
 * The provider with every call of every capability observed by `health`. A proxy rather than
 * a list of methods, so a capability added to the contract is watched too; each method is
 * wrapped once, on first use.
 */
export function watchProvider(provider: Provider, health: ProviderHealth): Provider {
  const watchCapability = <T extends object>(capability: T): T => {
    const wrapped = new Map<PropertyKey, unknown>();
    return new Proxy(capability, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function') return value;
        let method = wrapped.get(property);
        if (method === undefined) {
          method = (...args: unknown[]) => {
            const result: unknown = (value as (...values: unknown[]) => unknown).apply(target, args);
            if (!(result instanceof Promise)) return result;
            return result.then(
              (answer: unknown) => {
                health.observe(provider.name, undefined);
                return answer;
              },
              (error: unknown) => {
                health.observe(provider.name, error);
                throw error;
              },
            );
          };
          wrapped.set(property, method);
        }
        return method;
      },
    });
  };
  const watched: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(provider)) {
    watched[key] = typeof value === 'object' && value !== null ? watchCapability(value) : value;
  }
  return watched as unknown as Provider;
}
