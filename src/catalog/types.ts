import type { ModelMode } from '../config/index.js';

export type { ModelMode };

export type PricingStatus = 'documented' | 'short_context' | 'docs_inferred' | 'starts_at';

export interface ModelPricing {
  input_per_million: number | null;
  output_per_million: number | null;
  cached_input_per_million: number | null;
  image_per_unit: number | null;
  audio_per_minute: number | null;
  status: PricingStatus;
  note: string | null;
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

/** The public model entry of the spec, exactly as `GET /v1/models` shows it. */
export interface PublicModelEntry {
  id: string;
  object: 'model';
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
