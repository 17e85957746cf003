import type { ShippedModel } from '../descriptor.js';

/*
 * Bedrock's models in the shipped catalog, by Bedrock's own ids behind `bedrock/`. Prices are
 * Bedrock's on-demand list prices in USD per 1M tokens (checked November 2026). Claude 4.5
 * models through a geographic inference profile (us., eu., apac.: the default
 * inferenceProfile, geo) cost 10 % more than through the global one.
 */

function price(input: number, output: number, cachedInput: number | null, cacheWrite: number | null, note: string | null, status: 'documented' | 'docs_inferred' = 'documented'): NonNullable<ShippedModel['pricing']> {
  return {
    input_per_million: input,
    output_per_million: output,
    cached_input_per_million: cachedInput,
    cache_write_per_million: cacheWrite,
    cache_write_1h_per_million: null,
    image_per_unit: null,
    audio_per_minute: null,
    status,
    note,
    tiers: [],
  };
}

const GEO_PREMIUM = 'Through a geographic inference profile (inferenceProfile geo, the default): the global price plus 10 %. With inferenceProfile global: ';

const NOVA_INPUTS = ['text', 'image', 'file', 'pdf'];

export const BEDROCK_MODELS: readonly ShippedModel[] = [
  {
    id: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0',
    upstreamId: 'anthropic.claude-sonnet-4-5-20250929-v1:0',
    sameAs: 'claude-sonnet-4-5',
    description: 'Claude Sonnet 4.5 on Amazon Bedrock.',
    pricing: price(3.3, 16.5, 0.33, 4.125, `${GEO_PREMIUM}$3 in, $15 out.`, 'docs_inferred'),
  },
  {
    id: 'bedrock/anthropic.claude-haiku-4-5-20251001-v1:0',
    upstreamId: 'anthropic.claude-haiku-4-5-20251001-v1:0',
    sameAs: 'claude-haiku-4-5',
    description: 'Claude Haiku 4.5 on Amazon Bedrock.',
    pricing: price(1.1, 5.5, 0.11, 1.375, `${GEO_PREMIUM}$1 in, $5 out.`, 'docs_inferred'),
  },
  {
    id: 'bedrock/anthropic.claude-opus-4-1-20250805-v1:0',
    upstreamId: 'anthropic.claude-opus-4-1-20250805-v1:0',
    sameAs: 'claude-opus-4-1',
    description: 'Claude Opus 4.1 on Amazon Bedrock.',
    pricing: price(15, 75, 1.5, 18.75, null),
  },
  {
    id: 'bedrock/amazon.nova-pro-v1:0',
    upstreamId: 'amazon.nova-pro-v1:0',
    mode: 'chat',
    owned_by: 'amazon',
    description: 'Amazon Nova Pro: multimodal model balancing accuracy, speed and cost.',
    intelligence: 'High',
    speed: 'Fast',
    input_modalities: NOVA_INPUTS,
    output_modalities: ['text'],
    context_window: 300_000,
    max_output_tokens: 10_000,
    tools: true,
    pricing: price(0.8, 3.2, 0.2, null, null),
  },
  {
    id: 'bedrock/amazon.nova-lite-v1:0',
    upstreamId: 'amazon.nova-lite-v1:0',
    mode: 'chat',
    owned_by: 'amazon',
    description: 'Amazon Nova Lite: very low-cost multimodal model.',
    intelligence: 'Average',
    speed: 'Very Fast',
    input_modalities: NOVA_INPUTS,
    output_modalities: ['text'],
    context_window: 300_000,
    max_output_tokens: 10_000,
    tools: true,
    pricing: price(0.06, 0.24, 0.015, null, null),
  },
  {
    id: 'bedrock/amazon.nova-micro-v1:0',
    upstreamId: 'amazon.nova-micro-v1:0',
    mode: 'chat',
    owned_by: 'amazon',
    description: 'Amazon Nova Micro: text-only, lowest latency and cost.',
    intelligence: 'Average',
    speed: 'Very Fast',
    input_modalities: ['text'],
    output_modalities: ['text'],
    context_window: 128_000,
    max_output_tokens: 10_000,
    tools: true,
    pricing: price(0.035, 0.14, 0.00875, null, null),
  },
  {
    id: 'bedrock/meta.llama3-3-70b-instruct-v1:0',
    upstreamId: 'meta.llama3-3-70b-instruct-v1:0',
    mode: 'chat',
    owned_by: 'meta',
    description: 'Llama 3.3 70B Instruct on Amazon Bedrock.',
    intelligence: 'High',
    speed: 'Fast',
    input_modalities: ['text'],
    output_modalities: ['text'],
    context_window: 128_000,
    max_output_tokens: 8_192,
    tools: true,
    pricing: price(0.72, 0.72, null, null, null),
  },
  {
    id: 'bedrock/amazon.titan-embed-text-v2:0',
    upstreamId: 'amazon.titan-embed-text-v2:0',
    mode: 'embedding',
    owned_by: 'amazon',
    description: 'Amazon Titan Text Embeddings V2 (256, 512 or 1024 dimensions).',
    intelligence: 'Embedding',
    speed: 'Fast',
    input_modalities: ['text'],
    output_modalities: ['embedding'],
    tools: false,
    pricing: price(0.02, 0, null, null, null),
  },
  {
    id: 'bedrock/cohere.embed-english-v3',
    upstreamId: 'cohere.embed-english-v3',
    mode: 'embedding',
    owned_by: 'cohere',
    description: 'Cohere Embed English v3 on Amazon Bedrock (1024 dimensions).',
    intelligence: 'Embedding',
    speed: 'Fast',
    input_modalities: ['text'],
    output_modalities: ['embedding'],
    tools: false,
    pricing: price(0.1, 0, null, null, null),
  },
  {
    id: 'bedrock/cohere.embed-multilingual-v3',
    upstreamId: 'cohere.embed-multilingual-v3',
    mode: 'embedding',
    owned_by: 'cohere',
    description: 'Cohere Embed Multilingual v3 on Amazon Bedrock (1024 dimensions).',
    intelligence: 'Embedding',
    speed: 'Fast',
    input_modalities: ['text'],
    output_modalities: ['embedding'],
    tools: false,
    pricing: price(0.1, 0, null, null, null),
  },
];
