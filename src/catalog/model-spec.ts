import type { ModelFeatures, ModelMode, ModelPricing, PublicModelEntry } from './types.js';

/** The compact form catalog entries are written in; the public entry is derived from it. */
export interface ModelSpec {
  id: string;
  /** Provider registry name that serves it. */
  provider: string;
  /** owned_by label. */
  ownedBy: string;
  upstreamId?: string;
  mode: ModelMode;
  description: string;
  intelligence: string;
  speed: string;
  inputModalities: string[];
  outputModalities: string[];
  contextWindow: number | null;
  maxOutputTokens: number | null;
  tools: boolean;
  /** Thinks with a settable effort or budget; absent: no. */
  reasoning?: boolean;
  /** Its vendor has a web search tool for it; absent: no. */
  webSearch?: boolean;
  defaultVoice?: string;
  pricing: ModelPricing | null;
  /** When the vendor released it (YYYY-MM-DD, UTC): `created` of its entry. */
  released?: string;
}

export const ENDPOINT_BY_MODE: Record<ModelMode, string> = {
  chat: '/v1/chat/completions',
  embedding: '/v1/embeddings',
  image_generation: '/v1/images/generations',
  audio_transcription: '/v1/audio/transcriptions',
  audio_speech: '/v1/audio/speech',
};

export function featuresOf(spec: ModelSpec): ModelFeatures {
  return { reasoning: spec.reasoning === true, webSearch: spec.webSearch === true };
}

/**
 * The entry of a spec; `listedAt` (Unix seconds) is its `created` when the spec has no
 * release date (an operator's model, a future id), as OpenAI-compatible servers date theirs.
 */
export function toPublicEntry(spec: ModelSpec, listedAt: number): PublicModelEntry {
  const inputs = new Set(spec.inputModalities);
  const outputs = new Set(spec.outputModalities);
  const entry: PublicModelEntry = {
    id: spec.id,
    object: 'model',
    created: spec.released === undefined ? listedAt : Date.parse(`${spec.released}T00:00:00Z`) / 1000,
    mode: spec.mode,
    endpoint: ENDPOINT_BY_MODE[spec.mode],
    description: spec.description,
    owned_by: spec.ownedBy,
    intelligence: spec.intelligence,
    speed: spec.speed,
    input_modalities: [...spec.inputModalities],
    output_modalities: [...spec.outputModalities],
    context_window: spec.mode === 'chat' ? spec.contextWindow : null,
    max_output_tokens: spec.mode === 'chat' ? spec.maxOutputTokens : null,
    supports_streaming: spec.mode === 'chat',
    capabilities: {
      text: inputs.has('text') || outputs.has('text'),
      images: inputs.has('image'),
      files: inputs.has('file'),
      pdf: inputs.has('pdf'),
      audio: inputs.has('audio') || outputs.has('audio'),
      tools: spec.tools,
      embeddings: outputs.has('embedding'),
      image_generation: outputs.has('image'),
    },
    pricing: spec.pricing === null ? null : { ...spec.pricing },
  };
  if (spec.defaultVoice !== undefined) entry.default_voice = spec.defaultVoice;
  return entry;
}
