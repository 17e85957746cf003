import type { ProviderDescriptor } from '../descriptor.js';
import { createOpenAICompatibleProvider } from '../openai/index.js';
import { EntraTokens } from './entra-token.js';
import { AZURE_VARIABLES, AzureSettingsSchema, azureSecrets, deploymentModels, describeAzure, missingAzureSetting, RESPONSES_API_VERSION, usesEntra, type AzureSettings } from './settings.js';

/**
 * The URL of an endpoint for a deployment: the v1 API's OpenAI paths (the deployment is the
 * body's `model`), or the deployment's own path with `?api-version=`.
 */
function urlsOf(settings: AzureSettings): (path: string, deployment: string) => string {
  const endpoint = (settings.endpoint ?? '').replace(/\/+$/, '');
  const urls = new Map<string, string>();
  return (path, deployment) => {
    const key = `${path} ${deployment}`;
    let url = urls.get(key);
    if (url === undefined) {
      if (settings.apiVersion === 'v1') url = `${endpoint}/openai/v1${path}`;
      else if (path === '/responses') url = `${endpoint}/openai/responses?api-version=${RESPONSES_API_VERSION}`;
      else url = `${endpoint}/openai/deployments/${encodeURIComponent(deployment)}${path}?api-version=${encodeURIComponent(settings.apiVersion)}`;
      urls.set(key, url);
    }
    return url;
  };
}

/** Azure OpenAI (`providers.azure`): the OpenAI adapter over a resource's deployments, with an api-key or Entra ID tokens. */
export const azureProvider: ProviderDescriptor<'azure', 'microsoft', typeof AzureSettingsSchema> = {
  name: 'azure',
  owner: 'microsoft',
  settings: AzureSettingsSchema,
  environment: AZURE_VARIABLES,
  credentialField: 'apiKey',
  secretFields: ['apiKey', 'clientSecret'],
  secretValues: azureSecrets,
  missing: missingAzureSetting,
  describe: describeAzure,
  models: deploymentModels,
  create: ({ name, settings, http }) => {
    const tokens = usesEntra(settings) ? new EntraTokens(name, settings, http) : undefined;
    return createOpenAICompatibleProvider({
      name,
      baseUrl: settings.endpoint ?? 'https://invalid.example',
      http,
      servesResponses: true,
      urlOf: urlsOf(settings),
      ...(settings.apiKey !== undefined ? { credentialHeaders: { 'api-key': settings.apiKey } } : {}),
      ...(tokens !== undefined ? { credentialHeaders: {}, tokenHeaders: () => tokens.headers() } : {}),
    });
  },
};
