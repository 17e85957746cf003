import type { GatewayConfig } from '../config/index.js';
import { createAnthropicProvider } from './anthropic/index.js';
import { createGeminiProvider } from './gemini/index.js';
import { createOpenAICompatibleProvider } from './openai/index.js';
import type { ProviderRequestIds } from './shared/provider-request-ids.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from './shared/upstream-http.js';
import type { MissingCredential } from './registry.js';
import type { Provider } from './types.js';
import type { UpstreamTracing } from '../telemetry/index.js';

/**
 * Builds every provider the config declares. All of them share ONE pooled keep-alive
 * dispatcher, so connections to each upstream origin are reused across requests.
 */
export function createProviders(config: GatewayConfig, providerRequestIds: ProviderRequestIds, tracing?: UpstreamTracing): Provider[] {
  const http: UpstreamHttpOptions = {
    dispatcher: createUpstreamDispatcher(config.upstream),
    timeoutMs: config.upstream.timeoutMs,
    streamIdleTimeoutMs: config.upstream.streamIdleTimeoutMs,
    providerRequestIds,
    ...(tracing !== undefined ? { tracing } : {}),
  };
  const { openai, compatible } = config.providers;
  return [
    createOpenAICompatibleProvider({ name: 'openai', baseUrl: openai.baseUrl, apiKey: openai.apiKey, http }),
    createAnthropicProvider({ name: 'anthropic', baseUrl: config.providers.anthropic.baseUrl, apiKey: config.providers.anthropic.apiKey, http }),
    createGeminiProvider({ name: 'gemini', baseUrl: config.providers.gemini.baseUrl, apiKey: config.providers.gemini.apiKey, http }),
    ...compatible.map((provider) => createOpenAICompatibleProvider({ name: provider.name, baseUrl: provider.baseUrl, apiKey: provider.apiKey, http })),
  ];
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
