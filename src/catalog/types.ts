import type { ModelMode } from '../config/index.js';

export type { ModelMode };

export type PricingStatus = 'documented' | 'short_context' | 'docs_inferred' | 'starts_at';

/**
 * The per-token prices of a prompt size: the pricing object's own (its first seven fields are
 * the public entry's), or a tier's. USD per 1M tokens; null as documented in docs/catalog.md.
 */
export interface TokenPrices {
  input_per_million: number | null;
  output_per_million: number | null;
  /** Prompt tokens read from the provider's cache; null: the input price. */
  cached_input_per_million: number | null;
  /** Prompt tokens written to the provider's cache (Anthropic: 5-minute entries, 1.25× input); null: the input price. */
  cache_write_per_million: number | null;
  /** Prompt tokens written to a 1-hour cache entry (Anthropic: 2× input); null: the 5-minute write price. */
  cache_write_1h_per_million: number | null;
}

/** Prices that replace the token prices when the prompt has more than `above_prompt_tokens` tokens (Gemini Pro above 200k). */
export interface PriceTier extends TokenPrices {
  above_prompt_tokens: number;
}

export interface ModelPricing extends TokenPrices {
  image_per_unit: number | null;
  audio_per_minute: number | null;
  status: PricingStatus;
  note: string | null;
  /** Long-prompt prices, by `above_prompt_tokens` ascending; empty when one price holds for every prompt size. */
  tiers: PriceTier[];
}

export interface ModelCapabilities {
  text: boolean;
  images: boolean;
  files: boolean;
  pdf: boolean;
  audio: boolean;
  tools: boolean;
  embeddings: boolean;
  image_generation: boolean;
}

/** What a chat model can do beyond the spec's capabilities, for translating the other APIs' fields (docs/catalog.md). */
export interface ModelFeatures {
  /** Thinks before it answers, with an effort or budget the caller can set (reasoning effort, thinking). */
  reasoning: boolean;
  /** Its vendor runs a web search tool for it: a caller's built-in web search tool is served by that tool. */
  webSearch: boolean;
}

/** The public model entry, exactly as `GET /v1/models` shows it. */
export interface PublicModelEntry {
  id: string;
  object: 'model';
  /** Unix seconds: the vendor's release of the model, or when this gateway listed it (no known date). */
  created: number;
  mode: ModelMode;
  endpoint: string;
  description: string;
  owned_by: string;
  intelligence: string;
  speed: string;
  input_modalities: string[];
  output_modalities: string[];
  context_window: number | null;
  max_output_tokens: number | null;
  supports_streaming: boolean;
  capabilities: ModelCapabilities;
  default_voice?: string;
  pricing: ModelPricing | null;
}

/** A catalog entry: the public entry plus how the gateway reaches it. */
export interface CatalogModel {
  readonly entry: PublicModelEntry;
  /** Name of the provider that serves it (a key of the provider registry). */
  readonly provider: string;
  /** Model id sent upstream. */
  readonly upstreamId: string;
  readonly features: ModelFeatures;
}

/** The outcome of resolving a client's `model` value. */
export interface ResolvedModel {
  /** What the caller sent (shown back in responses and logs). */
  readonly requested: string;
  /** The catalog id it resolved to (a service alias resolves to its target's id). */
  readonly id: string;
  readonly model: CatalogModel;
  /** True when the id was not in the catalog but inferred from a safe prefix. */
  readonly inferred: boolean;
}
