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

/** The configured providers by name. Built once at start-up from the config. */
export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();
  private readonly missingCredentials: ReadonlyMap<string, MissingCredential>;
  private readonly health: ProviderHealth | undefined;
  private readonly descriptions: ReadonlyMap<string, string>;

  constructor(providers: Iterable<Provider>, options: ProviderRegistryOptions = {}) {
    this.missingCredentials = options.missingCredentials ?? new Map();
    this.health = options.health;
    this.descriptions = options.descriptions ?? new Map();
    for (const provider of providers) {
      this.providers.set(provider.name, this.health === undefined ? provider : watchProvider(provider, this.health));
    }
  }

  /** A provider built besides the registered ones (a routing deployment's variant), observed by the same health watch. */
  watched(provider: Provider): Provider {
    return this.health === undefined ? provider : watchProvider(provider, this.health);
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
    const provider = this.providers.get(name);
    if (provider === undefined) {
      throw new GatewayError('provider_error', 'The provider that serves this model is not configured on this gateway.', {
        logDetail: { provider: name, reason: 'provider not configured' },
      });
    }
    return provider;
  }
}
