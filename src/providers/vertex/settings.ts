import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import type { MissingSetting, SettingVariable } from '../descriptor.js';

/** `providers.vertex`: a Google Cloud project and location, and a service account's key file (or an access token). */
export const VertexSettingsSchema = Type.Object(
  {
    project: Type.Optional(Type.String({ minLength: 1, description: 'Google Cloud project id; default the key file\'s project_id' })),
    location: Type.String({ pattern: '^[a-z0-9-]+$', default: 'global', description: 'Vertex AI location: global, us-central1, europe-west1, us-east5, …' }),
    credentialsFile: Type.Optional(Type.String({ minLength: 1, description: "a service account's JSON key file; its OAuth tokens are renewed before they expire" })),
    accessToken: Type.Optional(Type.String({ minLength: 1, description: 'an OAuth access token used as it is (minted elsewhere), instead of a key file' })),
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://', description: 'default https://<location>-aiplatform.googleapis.com (https://aiplatform.googleapis.com for global)' })),
    tokenUrl: Type.String({ pattern: '^https?://', default: 'https://oauth2.googleapis.com/token', description: "Google's OAuth token endpoint (a proxy's, in a closed network)" }),
  },
  { additionalProperties: false, default: {} },
);

export type VertexSettings = Static<typeof VertexSettingsSchema>;

export const VERTEX_VARIABLES: readonly SettingVariable[] = [
  { field: 'project', variables: ['GOOGLE_CLOUD_PROJECT', 'GCLOUD_PROJECT'], kind: 'string' },
  { field: 'location', variables: ['GOOGLE_CLOUD_LOCATION'], kind: 'string' },
  { field: 'credentialsFile', variables: ['GOOGLE_APPLICATION_CREDENTIALS'], kind: 'string' },
  { field: 'accessToken', variables: ['VERTEX_ACCESS_TOKEN'], kind: 'string' },
  { field: 'baseUrl', variables: ['VERTEX_BASE_URL'], kind: 'string' },
  { field: 'tokenUrl', variables: ['VERTEX_TOKEN_URL'], kind: 'string' },
];

/** A service account key file's members the gateway reads. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  project_id?: string;
}

/** The key file, or null when it cannot be read as a service account key. */
export function readServiceAccountKey(path: string | undefined): ServiceAccountKey | null {
  if (path === undefined) return null;
  try {
    const key = JSON.parse(readFileSync(path, 'utf8')) as Partial<ServiceAccountKey>;
    return typeof key.client_email === 'string' && typeof key.private_key === 'string' ? (key as ServiceAccountKey) : null;
  } catch {
    return null;
  }
}

export function projectOf(settings: VertexSettings): string | undefined {
  return settings.project ?? readServiceAccountKey(settings.credentialsFile)?.project_id;
}

export function missingVertexSetting(settings: VertexSettings): MissingSetting | null {
  if (settings.accessToken === undefined && readServiceAccountKey(settings.credentialsFile) === null) {
    return { variable: 'GOOGLE_APPLICATION_CREDENTIALS (a service account key file)', field: 'credentialsFile' };
  }
  if (projectOf(settings) === undefined) return { variable: 'GOOGLE_CLOUD_PROJECT', field: 'project' };
  return null;
}

export function describeVertex(settings: VertexSettings): string {
  const key = readServiceAccountKey(settings.credentialsFile);
  const credential = key !== null ? `service account ${key.client_email}` : settings.accessToken !== undefined ? 'access token' : 'no credential';
  return `project ${projectOf(settings) ?? '(none)'}, location ${settings.location}, ${credential}`;
}

export function vertexSecrets(settings: VertexSettings): string[] {
  const key = readServiceAccountKey(settings.credentialsFile);
  return [settings.accessToken, key?.private_key].filter((value): value is string => value !== undefined);
}
