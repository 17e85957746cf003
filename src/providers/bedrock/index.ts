import type { ProviderDescriptor } from '../descriptor.js';
import { BEDROCK_MODELS } from './models.js';
import { createBedrockProvider } from './provider.js';
import { BEDROCK_VARIABLES, BedrockSettingsSchema, bedrockSecrets, describeBedrock, missingBedrockSetting } from './settings.js';

export { createBedrockProvider } from './provider.js';

/** AWS Bedrock (`providers.bedrock`): Converse for chat, Claude's Messages API natively, Titan and Cohere embeddings. */
export const bedrockProvider: ProviderDescriptor<'bedrock', 'amazon', typeof BedrockSettingsSchema> = {
  name: 'bedrock',
  owner: 'amazon',
  settings: BedrockSettingsSchema,
  environment: BEDROCK_VARIABLES,
  credentialField: 'apiKey',
  secretFields: ['accessKeyId', 'secretAccessKey', 'sessionToken', 'apiKey'],
  secretValues: bedrockSecrets,
  missing: missingBedrockSetting,
  describe: describeBedrock,
  models: () => BEDROCK_MODELS,
  create: ({ name, settings, http }) => createBedrockProvider({ name, settings, http }),
};
