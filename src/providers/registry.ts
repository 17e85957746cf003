import { GatewayError } from '../errors/index.js';
import { ProviderRequestIds } from './shared/provider-request-ids.js';
import type { Provider } from './types.js';

/** The configured providers by name. Built once at start-up from the config. */
export class ProviderRegistry {
  private readonly providers = new Map<string, Provider>();

  /**
   * @param requestIds where the providers' adapters note the vendors' ids of their calls (the
   *   same object their HTTP options were given); the request log takes them from here.
   */
  constructor(
    providers: Iterable<Provider>,
    readonly requestIds: ProviderRequestIds = new ProviderRequestIds(),
  ) {
    for (const provider of providers) this.providers.set(provider.name, provider);
  }

  names(): string[] {
    return [...this.providers.keys()];
  }

  /** The provider serving a catalog model, or a provider_error when it is not configured. */
  get(name: string): Provider {
    const provider = this.providers.get(name);
    if (provider === undefined) {
      throw new GatewayError('provider_error', 'The provider that serves this model is not configured on this gateway.', {
        logDetail: { provider: name, reason: 'provider not configured' },
      });
    }
    return provider;
  }
}
