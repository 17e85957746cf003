import { Type, type Static } from '@sinclair/typebox';

/**
 * A model entry of the catalog as the config file and a provider's shipped models declare it:
 * its schema is part of the contract, shared by config/, catalog/ and providers/.
 */

const Price = () => Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { default: null });

/** Per-token prices, of the pricing object and of each tier (docs/catalog.md, Pricing). */
const TOKEN_PRICES = {
  input_per_million: Price(),
  output_per_million: Price(),
  cached_input_per_million: Price(),
  cache_write_per_million: Price(),
  cache_write_1h_per_million: Price(),
};

const PriceTierSchema = Type.Object(
  {
    above_prompt_tokens: Type.Integer({ minimum: 1, description: 'the tier applies to prompts of more tokens than this' }),
    ...TOKEN_PRICES,
  },
  { additionalProperties: false },
);

const ModelPricingSchema = Type.Object(
  {
    ...TOKEN_PRICES,
    image_per_unit: Price(),
    audio_per_minute: Price(),
    status: Type.Union(
      [Type.Literal('documented'), Type.Literal('short_context'), Type.Literal('docs_inferred'), Type.Literal('starts_at')],
      { default: 'documented' },
    ),
    note: Type.Union([Type.String(), Type.Null()], { default: null }),
    tiers: Type.Array(PriceTierSchema, { default: [], description: 'long-prompt prices, by above_prompt_tokens ascending' }),
  },
  { additionalProperties: false },
);

export const ModelModeSchema = Type.Union([
  Type.Literal('chat'),
  Type.Literal('embedding'),
  Type.Literal('image_generation'),
  Type.Literal('audio_transcription'),
  Type.Literal('audio_speech'),
]);

/** A model declared or overridden in the config file (merged over the shipped catalog by id). */
export const ModelOverrideSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    provider: Type.Optional(Type.String({ minLength: 1, description: 'provider name that serves it' })),
    upstreamId: Type.Optional(Type.String({ minLength: 1, description: 'the id sent upstream, when it differs' })),
    mode: Type.Optional(ModelModeSchema),
    description: Type.Optional(Type.String()),
    owned_by: Type.Optional(Type.String()),
    intelligence: Type.Optional(Type.String()),
    speed: Type.Optional(Type.String()),
    input_modalities: Type.Optional(Type.Array(Type.String())),
    output_modalities: Type.Optional(Type.Array(Type.String())),
    context_window: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    tools: Type.Optional(Type.Boolean()),
    reasoning: Type.Optional(Type.Boolean({ description: 'the model thinks with a settable effort or budget (reasoning effort, thinking)' })),
    web_search: Type.Optional(Type.Boolean({ description: "the model's vendor runs a web search tool for it" })),
    default_voice: Type.Optional(Type.String()),
    pricing: Type.Optional(Type.Union([ModelPricingSchema, Type.Null()])),
    disabled: Type.Optional(Type.Boolean({ description: 'remove a shipped model from the catalog' })),
  },
  { additionalProperties: false },
);

export type ModelMode = Static<typeof ModelModeSchema>;
export type ModelOverride = Static<typeof ModelOverrideSchema>;
