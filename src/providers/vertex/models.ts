import type { ShippedModel } from '../descriptor.js';
import { perMillion } from '../shared/shipped-price.js';

/*
 * Vertex AI's models in the shipped catalog, by Vertex's own ids behind `vertex/`: Google's
 * Gemini models and Anthropic's Claude models (publisher models), each the same model as the
 * catalog's own entry (`sameAs`). Prices are Vertex AI's list prices through the global
 * endpoint (the default location), in USD per 1M tokens, checked November 2026: Gemini's are
 * those of the Gemini API's paid tier, Claude's Anthropic's; a regional endpoint costs Claude
 * 4.5 models 10 % more.
 */

export function vertexModels(): ShippedModel[] {
  return [
    { id: 'vertex/gemini-2.5-pro', upstreamId: 'gemini-2.5-pro', sameAs: 'gemini-2.5-pro', description: 'Gemini 2.5 Pro on Vertex AI.' },
    { id: 'vertex/gemini-2.5-flash', upstreamId: 'gemini-2.5-flash', sameAs: 'gemini-2.5-flash', description: 'Gemini 2.5 Flash on Vertex AI.' },
    { id: 'vertex/gemini-2.5-flash-lite', upstreamId: 'gemini-2.5-flash-lite', sameAs: 'gemini-2.5-flash-lite', description: 'Gemini 2.5 Flash-Lite on Vertex AI.' },
    { id: 'vertex/claude-sonnet-4-5@20250929', upstreamId: 'claude-sonnet-4-5@20250929', sameAs: 'claude-sonnet-4-5', description: 'Claude Sonnet 4.5 on Vertex AI (a regional endpoint costs 10 % more than the global one).' },
    { id: 'vertex/claude-haiku-4-5@20251001', upstreamId: 'claude-haiku-4-5@20251001', sameAs: 'claude-haiku-4-5', description: 'Claude Haiku 4.5 on Vertex AI (a regional endpoint costs 10 % more than the global one).' },
    { id: 'vertex/claude-opus-4-1@20250805', upstreamId: 'claude-opus-4-1@20250805', sameAs: 'claude-opus-4-1', description: 'Claude Opus 4.1 on Vertex AI.' },
    { id: 'vertex/gemini-embedding-001', upstreamId: 'gemini-embedding-001', sameAs: 'gemini-embedding-001', description: 'Gemini Embedding on Vertex AI (up to 3072 dimensions).' },
    {
      id: 'vertex/text-embedding-005',
      upstreamId: 'text-embedding-005',
      mode: 'embedding',
      owned_by: 'google',
      description: 'Text Embedding 005 on Vertex AI (768 dimensions, English and code).',
      intelligence: 'Embedding',
      speed: 'Fast',
      input_modalities: ['text'],
      output_modalities: ['embedding'],
      tools: false,
      pricing: perMillion(0.1, null, null, { note: 'Billed $0.025 per 1M input characters; the per-token price assumes about 4 characters per token.', status: 'docs_inferred' }),
    },
  ];
}
