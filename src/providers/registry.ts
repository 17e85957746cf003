import { GatewayError } from '../errors/index.js';
import { watchProvider, type ProviderHealth, type ProviderHealthView } from './health.js';
import type { Provider } from '../model-api/index.js';

/** How to give a provider that has no credential one: the environment variable and its config-file twin. */
export interface MissingCredential {
  variable: string;
  setting: string;
}

/** A provider as start-up and `modelgate status` describe it. */
export interface ProviderSummary {
  name: string;
  configured: boolean;
  /** What to set, when it is not configured. */
  missing: MissingCredential | null;
  /** Its settings in words (endpoint, region, credential kind), never a secret; null for a provider without a descriptor's. */
  description: string | null;
  health: ProviderHealthView;
}

export interface ProviderRegistryOptions {
  /**
   * Providers that are registered (a request for one of their models resolves) but cannot be
   * called until the operator gives them a credential.
   */
  missingCredentials?: ReadonlyMap<string, MissingCredential>;
  /** Observes every call, so refused credentials and unreachable providers reach the operator. */
  health?: ProviderHealth;
  /** Each provider's settings in words (providerDescriptions). */
  descriptions?: ReadonlyMap<string, string>;
}

/** How a provider put in live is described: what it lacks (null when it can be called) and its settings in words. */
export interface LiveProviderState {
  missing: MissingCredential | null;
  description: string | null;
}

/**
 * The providers by name: built at start-up from the config, and changed live when an
 * administrator adds, edits or removes a provider instance (src/provider-instances). What
 * `get` hands out follows such a change: a routing plan compiled before it calls the new one.
 */
export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();
  private readonly handles = new Map<string, Provider>();
  private readonly missingCredentials: Map<string, MissingCredential>;
  private readonly health: ProviderHealth | undefined;
  private readonly descriptions: Map<string, string>;

  constructor(providers: Iterable<Provider>, options: ProviderRegistryOptions = {}) {
    this.missingCredentials = new Map(options.missingCredentials ?? []);
    this.health = options.health;
    this.descriptions = new Map(options.descriptions ?? []);
    for (const provider of providers) this.providers.set(provider.name, this.watched(provider));
  }

  /** A provider built besides the registered ones (a routing deployment's variant), observed by the same health watch. */
  watched(provider: Provider): Provider {
    return this.health === undefined ? provider : watchProvider(provider, this.health);
  }

  /** Registers `provider` under its name, or replaces the one of that name: calls from now on reach it. */
  put(provider: Provider, state: LiveProviderState): void {
    this.providers.set(provider.name, this.watched(provider));
    if (state.missing === null) this.missingCredentials.delete(provider.name);
    else this.missingCredentials.set(provider.name, state.missing);
    if (state.description === null) this.descriptions.delete(provider.name);
    else this.descriptions.set(provider.name, state.description);
  }

  /** Takes the provider of this name away (an instance an administrator removed). */
  remove(name: string): void {
    this.providers.delete(name);
    this.missingCredentials.delete(name);
    this.descriptions.delete(name);
  }

  /** Whether a provider of this name is registered, and whether it can be called. */
  state(name: string): 'callable' | 'unconfigured' | 'absent' {
    if (!this.providers.has(name)) return 'absent';
    return this.missingCredentials.has(name) ? 'unconfigured' : 'callable';
  }

  names(): string[] {
    return [...this.providers.keys()];
  }

  /** Providers that cannot be called: their models are not listed by the catalog. */
  unconfiguredNames(): string[] {
    return [...this.missingCredentials.keys()];
  }

  summaries(): ProviderSummary[] {
    return this.names().map((name) => {
      const missing = this.missingCredentials.get(name) ?? null;
      const health = this.health?.view(name) ?? { state: 'ok', fault: null, since: null, last_failure_at: null, failures: 0 };
      return { name, configured: missing === null, missing, description: this.descriptions.get(name) ?? null, health };
    });
  }

  /**
   * The provider serving a catalog model: `provider_not_configured` when it has no credential
   * (the message names what to set), `provider_error` when there is no such provider.
   */
  get(name: string): Provider {
    const missing = this.missingCredentials.get(name);
    if (missing !== undefined) {
      throw new GatewayError(
        'provider_not_configured',
        `This model's provider (${name}) is not configured on this gateway: the operator must set ${missing.variable} (or ${missing.setting} in the config file) and restart it.`,
        { logDetail: { provider: name, reason: 'provider not configured' } },
      );
    }
    if (!this.providers.has(name)) {
      throw new GatewayError('provider_error', 'The provider that serves this model is not configured on this gateway.', {
        logDetail: { provider: name, reason: 'provider not configured' },
      });
    }
    return this.handleOf(name);
  }

  /** One object per name that reads the provider registered under it at each use, so a live change reaches those who hold it. */
  private handleOf(name: string): Provider {
    let handle = this.handles.get(name);
    if (handle === undefined) {
      const providers = this.providers;
      handle = new Proxy({ name } as Provider, {
        get: (_target, property) => (property === 'name' ? name : Reflect.get(providers.get(name) ?? {}, property)),
        has: (_target, property) => Reflect.has(providers.get(name) ?? {}, property),
      });
      this.handles.set(name, handle);
    }
    return handle;
  }
}
