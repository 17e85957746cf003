import { Type, type Static } from '@sinclair/typebox';
import type { MissingSetting, SettingVariable, ShippedModel } from '../descriptor.js';

/** The api-version of Azure's Responses API on the classic (api-version) paths. */
export const RESPONSES_API_VERSION = '2025-04-01-preview';

/** `providers.azure`: a resource endpoint, an api-key or an Entra ID application, and the deployments it serves. */
export const AzureSettingsSchema = Type.Object(
  {
    endpoint: Type.Optional(Type.String({ pattern: '^https?://', description: 'the resource endpoint, e.g. https://my-resource.openai.azure.com' })),
    apiKey: Type.Optional(Type.String({ minLength: 1, description: 'sent as the api-key header' })),
    apiVersion: Type.String({
      minLength: 1,
      default: 'v1',
      description: 'v1: the v1 API (/openai/v1/…, model = deployment name); a date (2024-10-21): the deployment paths with ?api-version=',
    }),
    tenantId: Type.Optional(Type.String({ minLength: 1, description: 'Entra ID tenant of the application (with clientId and clientSecret: bearer tokens instead of an api-key)' })),
    clientId: Type.Optional(Type.String({ minLength: 1 })),
    clientSecret: Type.Optional(Type.String({ minLength: 1 })),
    authorityHost: Type.String({ pattern: '^https?://', default: 'https://login.microsoftonline.com', description: 'the Entra ID authority (a sovereign cloud has its own)' }),
    deployments: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1, description: 'the deployment name, as in the Azure portal' }),
          model: Type.String({ minLength: 1, description: 'the catalog id of the model it runs (gpt-4o, text-embedding-3-small, …)' }),
          id: Type.Optional(Type.String({ minLength: 1, description: 'the catalog id callers send; default azure/<name>' })),
        },
        { additionalProperties: false },
      ),
      { default: [], description: 'each deployment of the resource, mapped to the catalog model it runs' },
    ),
  },
  { additionalProperties: false, default: {} },
);

export type AzureSettings = Static<typeof AzureSettingsSchema>;

/** The variables of Azure's own SDKs and CLI. */
export const AZURE_VARIABLES: readonly SettingVariable[] = [
  { field: 'endpoint', variables: ['AZURE_OPENAI_ENDPOINT'], kind: 'string' },
  { field: 'apiKey', variables: ['AZURE_OPENAI_API_KEY'], kind: 'string' },
  { field: 'apiVersion', variables: ['AZURE_OPENAI_API_VERSION', 'OPENAI_API_VERSION'], kind: 'string' },
  { field: 'tenantId', variables: ['AZURE_TENANT_ID'], kind: 'string' },
  { field: 'clientId', variables: ['AZURE_CLIENT_ID'], kind: 'string' },
  { field: 'clientSecret', variables: ['AZURE_CLIENT_SECRET'], kind: 'string' },
  { field: 'authorityHost', variables: ['AZURE_AUTHORITY_HOST'], kind: 'string' },
];

export function usesEntra(settings: AzureSettings): boolean {
  return settings.apiKey === undefined && settings.tenantId !== undefined && settings.clientId !== undefined && settings.clientSecret !== undefined;
}

export function missingAzureSetting(settings: AzureSettings): MissingSetting | null {
  if (settings.endpoint === undefined) return { variable: 'AZURE_OPENAI_ENDPOINT', field: 'endpoint' };
  if (settings.apiKey !== undefined || usesEntra(settings)) return null;
  return { variable: 'AZURE_OPENAI_API_KEY (or AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET)', field: 'apiKey' };
}

export function describeAzure(settings: AzureSettings): string {
  const credential = settings.apiKey !== undefined ? 'api-key' : usesEntra(settings) ? 'Entra ID application' : 'no credential';
  return `${settings.endpoint ?? '(no endpoint)'}, api-version ${settings.apiVersion}, ${credential}, ${settings.deployments.length} deployment(s)`;
}

export function azureSecrets(settings: AzureSettings): string[] {
  return [settings.apiKey, settings.clientSecret].filter((value): value is string => value !== undefined);
}

/** Each deployment as a catalog entry: the properties and price of the model it runs, its own id, the deployment name upstream. */
export function deploymentModels(settings: AzureSettings): ShippedModel[] {
  return settings.deployments.map((deployment, index) => ({
    id: deployment.id ?? `azure/${deployment.name}`,
    upstreamId: deployment.name,
    sameAs: deployment.model,
    declaredAt: `deployments[${index}]`,
  }));
}
