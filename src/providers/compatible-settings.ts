import { Type, type Static } from '@sinclair/typebox';
import { ModelOverrideSchema } from '../model-api/index.js';

/** An operator-declared OpenAI-compatible provider (Ollama, vLLM, Groq, …): `providers.compatible[]`. */
export const CompatibleProviderSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', description: 'lowercase name, used as owned_by' }),
    baseUrl: Type.String({ pattern: '^https?://' }),
    apiKey: Type.Optional(Type.String({ minLength: 1 })),
    models: Type.Array(ModelOverrideSchema, { default: [] }),
  },
  { additionalProperties: false },
);

export type CompatibleProviderConfig = Static<typeof CompatibleProviderSchema>;
