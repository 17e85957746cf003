import type { GatewayConfig } from '../config/index.js';
import { createAnthropicProvider } from './anthropic/index.js';
import { createGeminiProvider } from './gemini/index.js';
import { createOpenAICompatibleProvider } from './openai/index.js';
import type { ProviderRequestIds } from './shared/provider-request-ids.js';
import { createUpstreamDispatcher, type UpstreamHttpOptions } from './shared/upstream-http.js';
import type { Provider } from './types.js';

/**
 * Builds every provider the config declares. All of them share ONE pooled keep-alive
 * dispatcher, so connections to each upstream origin are reused across requests.
 */
export function createProviders(config: GatewayConfig, providerRequestIds: ProviderRequestIds): Provider[] {
  const http: UpstreamHttpOptions = {
    dispatcher: createUpstreamDispatcher(config.upstream),
    timeoutMs: config.upstream.timeoutMs,
    streamIdleTimeoutMs: config.upstream.streamIdleTimeoutMs,
    providerRequestIds,
  };
  const { openai, compatible } = config.providers;
  return [
    // Registered even without a key: the upstream's refusal is then logged (provider-neutral 502 to callers).
    createOpenAICompatibleProvider({ name: 'openai', baseUrl: openai.baseUrl, apiKey: openai.apiKey, http }),
    createAnthropicProvider({ name: 'anthropic', baseUrl: config.providers.anthropic.baseUrl, apiKey: config.providers.anthropic.apiKey, http }),
    createGeminiProvider({ name: 'gemini', baseUrl: config.providers.gemini.baseUrl, apiKey: config.providers.gemini.apiKey, http }),
    ...compatible.map((provider) => createOpenAICompatibleProvider({ name: provider.name, baseUrl: provider.baseUrl, apiKey: provider.apiKey, http })),
  ];
}
