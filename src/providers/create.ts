import type { GatewayConfig } from '../config/index.js';
import { createAnthropicProvider } from './anthropic/index.js';
import { createGeminiProvider } from './gemini/index.js';
import { createOpenAICompatibleProvider } from './openai/index.js';
import type { ProviderRateLimits } from './shared/provider-rate-limits.js';
import type { ProviderRequestIds } from './shared/provider-request-ids.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from './shared/upstream-http.js';
import type { MissingCredential } from './registry.js';
import type { Provider } from './types.js';
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

/**
 * Builds every provider the config declares, and the means to build variants of them. All of
 * them share ONE pooled keep-alive dispatcher, so connections to each upstream origin are
 * reused across requests. `rateLimits` notes the providers' remaining rate limits for
 * routing; `tracing`, set when traces are exported, makes each call a span.
 */
export function createProviders(
  config: GatewayConfig,
  providerRequestIds: ProviderRequestIds,
  options: { rateLimits?: ProviderRateLimits; tracing?: UpstreamTracing } = {},
): { providers: Provider[]; variants: ProviderVariants } {
  const http: UpstreamHttpOptions = {
    dispatcher: createUpstreamDispatcher(config.upstream),
    timeoutMs: config.upstream.timeoutMs,
    streamIdleTimeoutMs: config.upstream.streamIdleTimeoutMs,
    providerRequestIds,
    ...(options.rateLimits === undefined ? {} : { providerRateLimits: options.rateLimits }),
    ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
  };
  const { openai, anthropic, gemini, compatible } = config.providers;
  const builders = new Map<string, (settings: { apiKey: string | undefined; baseUrl: string }) => Provider>([
    ['openai', (settings) => createOpenAICompatibleProvider({ name: 'openai', ...settings, http, servesResponses: true })],
    ['anthropic', (settings) => createAnthropicProvider({ name: 'anthropic', ...settings, http })],
    ['gemini', (settings) => createGeminiProvider({ name: 'gemini', ...settings, http })],
    ...compatible.map(({ name }) => [name, (settings: { apiKey: string | undefined; baseUrl: string }) => createOpenAICompatibleProvider({ name, ...settings, http })] as const),
  ]);
  const defaults = new Map<string, { apiKey?: string | undefined; baseUrl: string }>([
    ['openai', openai],
    ['anthropic', anthropic],
    ['gemini', gemini],
    ...compatible.map((provider) => [provider.name, provider] as const),
  ]);
  const build = (name: string, overrides: ProviderOverrides): Provider | undefined => {
    const builder = builders.get(name);
    const settings = defaults.get(name);
    if (builder === undefined || settings === undefined) return undefined;
    return builder({ apiKey: overrides.apiKey ?? settings.apiKey, baseUrl: overrides.baseUrl ?? settings.baseUrl });
  };
  return { providers: [...builders.keys()].map((name) => build(name, {})!), variants: build };
}

/**
 * The vendors' providers that have no credential, with what to set. They stay registered so
 * a request for one of their models is answered with `provider_not_configured` naming the
 * variable, not with a vendor's refusal. A compatible provider's key is optional (a local
 * server needs none), so it is never missing.
 */
export function missingCredentials(config: GatewayConfig): Map<string, MissingCredential> {
  const vendors = [
    ['openai', config.providers.openai.apiKey, 'OPENAI_API_KEY'],
    ['anthropic', config.providers.anthropic.apiKey, 'ANTHROPIC_API_KEY'],
    ['gemini', config.providers.gemini.apiKey, 'GEMINI_API_KEY'],
  ] as const;
  return new Map(
    vendors
      .filter(([, apiKey]) => apiKey === undefined)
      .map(([name, , variable]) => [name, { variable, setting: `providers.${name}.apiKey` }]),
  );
}
