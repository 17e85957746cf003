import { Type } from '@sinclair/typebox';
import { Nullable } from './schema-helpers.js';

/** Response schemas of the status and catalog routes; they match src/catalog/types.ts field for field. */

const TOKEN_PRICES = {
  input_per_million: Nullable(Type.Number()),
  output_per_million: Nullable(Type.Number()),
  cached_input_per_million: Nullable(Type.Number({ description: 'prompt tokens read from the cache; null: the input price' })),
  cache_write_per_million: Nullable(Type.Number({ description: 'prompt tokens written to the cache (5-minute entries); null: the input price' })),
  cache_write_1h_per_million: Nullable(Type.Number({ description: 'prompt tokens written to 1-hour cache entries; null: the 5-minute write price' })),
};

export const ModelPricingSchema = Type.Object(
  {
    ...TOKEN_PRICES,
    image_per_unit: Nullable(Type.Number()),
    audio_per_minute: Nullable(Type.Number()),
    status: Type.Union([Type.Literal('documented'), Type.Literal('short_context'), Type.Literal('docs_inferred'), Type.Literal('starts_at')]),
    note: Nullable(Type.String()),
    tiers: Type.Array(
      Type.Object({
        above_prompt_tokens: Type.Integer({ description: 'these prices replace the token prices above when the prompt has more tokens than this' }),
        ...TOKEN_PRICES,
      }),
      { description: 'long-prompt prices, by above_prompt_tokens ascending; empty when one price holds for every prompt size' },
    ),
  },
  { description: 'Public list prices in USD; null means the model is not billed in that unit.' },
);

export const ModelEntrySchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('model'),
  created: Type.Integer({ description: "Unix seconds: the vendor's release of the model, or when the gateway listed it" }),
  mode: Type.Union([
    Type.Literal('chat'),
    Type.Literal('embedding'),
    Type.Literal('image_generation'),
    Type.Literal('audio_transcription'),
    Type.Literal('audio_speech'),
  ]),
  endpoint: Type.String({ description: 'path that serves the mode' }),
  description: Type.String(),
  owned_by: Type.String(),
  intelligence: Type.String(),
  speed: Type.String(),
  input_modalities: Type.Array(Type.String()),
  output_modalities: Type.Array(Type.String()),
  context_window: Nullable(Type.Integer()),
  max_output_tokens: Nullable(Type.Integer()),
  supports_streaming: Type.Boolean(),
  capabilities: Type.Object({
    text: Type.Boolean(),
    images: Type.Boolean(),
    files: Type.Boolean(),
    pdf: Type.Boolean(),
    audio: Type.Boolean(),
    tools: Type.Boolean(),
    embeddings: Type.Boolean(),
    image_generation: Type.Boolean(),
  }),
  default_voice: Type.Optional(Type.String()),
  pricing: Nullable(ModelPricingSchema),
});

export const StatusResponseSchema = Type.Object({
  status: Type.Literal('ok'),
  message: Type.String(),
  documentation: Type.String({ format: 'uri', description: 'the API reference page of this gateway' }),
  dashboard: Type.String({ format: 'uri', description: 'the operators\' dashboard of this gateway (sign-in needed)' }),
  metadata: Type.String({ description: 'path of the docs metadata' }),
  default_model: Type.String(),
  supported_models: Type.Array(Type.String()),
  upcoming_models: Type.Array(Type.String()),
});

export const ModelListResponseSchema = Type.Object({
  object: Type.Literal('list'),
  default_model: Type.String(),
  aliases: Type.Record(Type.String(), Type.String(), { description: 'legacy short name to full model id' }),
  available_models: Type.Array(ModelEntrySchema),
  data: Type.Array(ModelEntrySchema, { description: 'the same entries as available_models, for OpenAI SDK clients (models.list())' }),
});

export const EndpointSchema = Type.Object({
  method: Type.String(),
  path: Type.String(),
  auth: Type.Union([Type.Literal('none'), Type.Literal('api_key')]),
  scope: Nullable(Type.String()),
  description: Type.String(),
});

export const QuickstartSchema = Type.Object({
  id: Type.String(),
  title: Type.String(),
  language: Type.String(),
  code: Type.String(),
});

export const PlaygroundExampleSchema = Type.Object({
  id: Type.String(),
  title: Type.String(),
  method: Type.String(),
  path: Type.String(),
  body: Type.Record(Type.String(), Type.Unknown()),
});

export const DocsMetadataResponseSchema = Type.Object({
  version: Type.String(),
  models: Type.Array(ModelEntrySchema),
  endpoints: Type.Array(EndpointSchema),
  quickstarts: Type.Array(QuickstartSchema),
  playground_examples: Type.Array(PlaygroundExampleSchema),
  pricing_notes: Type.Array(Type.String()),
});
