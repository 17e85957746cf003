import type { ProviderDescriptor } from '../descriptor.js';
import { vertexModels } from './models.js';
import { createVertexProvider } from './provider.js';
import { VERTEX_VARIABLES, VertexSettingsSchema, describeVertex, missingVertexSetting, vertexSecrets } from './settings.js';

/** Google Vertex AI (`providers.vertex`): Gemini and Claude publisher models, embeddings; a service account's OAuth tokens. */
export const vertexProvider: ProviderDescriptor<'vertex', 'google', typeof VertexSettingsSchema> = {
  name: 'vertex',
  owner: 'google',
  settings: VertexSettingsSchema,
  environment: VERTEX_VARIABLES,
  credentialField: 'accessToken',
  secretFields: ['accessToken'],
  secretValues: vertexSecrets,
  missing: missingVertexSetting,
  describe: describeVertex,
  models: vertexModels,
  create: ({ name, settings, http }) => createVertexProvider({ name, settings, http }),
};
