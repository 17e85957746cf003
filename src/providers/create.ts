import type { GatewayConfig } from '../config/index.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from './shared/upstream-http.js';
import type { MissingCredential } from './registry.js';
import type { Provider } from '../model-api/index.js';
import { createCompatibleProvider, VENDOR_PROVIDERS } from './vendors.js';
import type { UpstreamTracing } from '../telemetry/index.js';

/** What a deployment of routing may change of a provider: its credential and its base URL. */
export interface ProviderOverrides {
  apiKey?: string | undefined;
  baseUrl?: string | undefined;
}

/**
 * Builds another instance of a configured provider with its own credential or base URL (a
 * routing deployment), on the same pooled dispatcher; undefined when no provider has that name.
 */
export type ProviderVariants = (name: string, overrides: ProviderOverrides) => Provider | undefined;

type BuildSettings = { apiKey: string | undefined; baseUrl: string };

/** A provider's builder with its configured key and base URL, which a deployment's overrides replace. */
function withSettings(settings: { apiKey?: string | undefined; baseUrl: string }, create: (settings: BuildSettings) => Provider) {
  return (overrides: ProviderOverrides): Provider => create({ apiKey: overrides.apiKey ?? settings.apiKey, baseUrl: overrides.baseUrl ?? settings.baseUrl });
}

/**
 * Builds every provider the config declares, and the means to build variants of them. All of
 * them share ONE pooled keep-alive dispatcher, so connections to each upstream origin are
 * reused across requests. `tracing`, set when traces are exported, makes each call a span.
 */
export function createProviders(config: GatewayConfig, options: { tracing?: UpstreamTracing } = {}): { providers: Provider[]; variants: ProviderVariants } {
  const http: UpstreamHttpOptions = {
    dispatcher: createUpstreamDispatcher(config.upstream),
    timeoutMs: config.upstream.timeoutMs,
    streamIdleTimeoutMs: config.upstream.streamIdleTimeoutMs,
    ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
  };
  const builders = new Map<string, (overrides: ProviderOverrides) => Provider>([
    ...VENDOR_PROVIDERS.map((vendor) => [vendor.name, withSettings(config.providers[vendor.name], (settings) => vendor.create({ name: vendor.name, ...settings, http }))] as const),
    ...config.providers.compatible.map((provider) => [provider.name, withSettings(provider, (settings) => createCompatibleProvider({ name: provider.name, ...settings, http }))] as const),
  ]);
  return { providers: [...builders.values()].map((build) => build({})), variants: (name, overrides) => builders.get(name)?.(overrides) };
}

/**
 * The vendors' providers that have no credential, with what to set. They stay registered so
 * a request for one of their models is answered with `provider_not_configured` naming the
 * variable, not with a vendor's refusal. A compatible provider's key is optional (a local
 * server needs none), so it is never missing.
 */
export function missingCredentials(config: GatewayConfig): Map<string, MissingCredential> {
  return new Map(
    VENDOR_PROVIDERS.filter((vendor) => config.providers[vendor.name].apiKey === undefined).map((vendor) => [
      vendor.name,
      { variable: vendor.environment.apiKey, setting: `providers.${vendor.name}.apiKey` },
    ]),
  );
}
