import { PROVIDER_OF_OWNER, type VendorOwner } from '../providers/index.js';
import type { CatalogData, SafePrefix } from './catalog.js';
import type { ModelSpec } from './model-spec.js';
import type { ModelMode, ModelPricing, PricingStatus, TokenPrices } from './types.js';

/*
 * The shipped catalog (docs/catalog.md): public list prices in USD, as the vendors' pricing
 * pages give them (checked November 2026), cache writes and long-prompt tiers included. `status` says how sure each price is; docs/catalog.md
 * explains the statuses. Operators correct or extend any entry in modelgate.yaml.
 */

interface PriceExtras {
  status?: PricingStatus;
  note?: string;
}

/** A price with every unit null (not billed that way) unless given. */
function price(units: Partial<ModelPricing>, extras: PriceExtras): ModelPricing {
  return {
    input_per_million: null,
    output_per_million: null,
    cached_input_per_million: null,
    cache_write_per_million: null,
    cache_write_1h_per_million: null,
    image_per_unit: null,
    audio_per_minute: null,
    tiers: [],
    ...units,
    status: extras.status ?? 'documented',
    note: extras.note ?? null,
  };
}

function perToken(input: number, output: number | null, cachedInput: number | null, extras: PriceExtras = {}): ModelPricing {
  return price({ input_per_million: input, output_per_million: output, cached_input_per_million: cachedInput }, extras);
}

/** Per-token prices of one prompt size: input, output and cache reads, plus cache writes where the vendor bills them apart. */
interface TokenPriceList {
  input: number;
  output: number;
  cachedInput: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
}

function tokenPrices(list: TokenPriceList): TokenPrices {
  return {
    input_per_million: list.input,
    output_per_million: list.output,
    cached_input_per_million: list.cachedInput,
    cache_write_per_million: list.cacheWrite ?? null,
    cache_write_1h_per_million: list.cacheWrite1h ?? null,
  };
}

/** Per-token prices that change with the prompt size: `base` up to `threshold` prompt tokens, `long` above. */
function perTokenByPromptSize(base: TokenPriceList, threshold: number, long: TokenPriceList, extras: PriceExtras = {}): ModelPricing {
  return price({ ...tokenPrices(base), tiers: [{ above_prompt_tokens: threshold, ...tokenPrices(long) }] }, extras);
}

function perImage(imagePrice: number, extras: PriceExtras): ModelPricing {
  return price({ image_per_unit: imagePrice }, extras);
}

function perMinute(minutePrice: number, extras: PriceExtras = {}): ModelPricing {
  return price({ audio_per_minute: minutePrice }, extras);
}


/** Input modalities per vendor family of chat models (what their chat APIs accept inline). */
const OPENAI_VISION = ['text', 'image', 'file', 'pdf'];
const GEMINI_MULTIMODAL = ['text', 'image', 'audio', 'file', 'pdf'];
const CLAUDE_VISION = ['text', 'image', 'file', 'pdf'];

interface ChatFields {
  description: string;
  intelligence: 'Higher' | 'High' | 'Average';
  speed: 'Very Fast' | 'Fast' | 'Medium';
  inputs: string[];
  contextWindow: number;
  maxOutputTokens: number;
  pricing: ModelPricing;
  reasoning?: boolean;
  webSearch?: boolean;
}

function chat(vendor: VendorOwner, id: string, fields: ChatFields): ModelSpec {
  return {
    id,
    provider: PROVIDER_OF_OWNER[vendor],
    ownedBy: vendor,
    mode: 'chat',
    description: fields.description,
    intelligence: fields.intelligence,
    speed: fields.speed,
    inputModalities: fields.inputs,
    outputModalities: ['text'],
    contextWindow: fields.contextWindow,
    maxOutputTokens: fields.maxOutputTokens,
    tools: true,
    ...(fields.reasoning === true ? { reasoning: true } : {}),
    ...(fields.webSearch === true ? { webSearch: true } : {}),
    pricing: fields.pricing,
  };
}

const NON_CHAT: Record<Exclude<ModelMode, 'chat'>, { intelligence: string; inputs: string[]; outputs: string[] }> = {
  embedding: { intelligence: 'Embedding', inputs: ['text'], outputs: ['embedding'] },
  image_generation: { intelligence: 'Image', inputs: ['text'], outputs: ['image'] },
  audio_speech: { intelligence: 'Audio', inputs: ['text'], outputs: ['audio'] },
  audio_transcription: { intelligence: 'Audio', inputs: ['audio'], outputs: ['text'] },
};

function nonChat(
  vendor: VendorOwner,
  id: string,
  mode: Exclude<ModelMode, 'chat'>,
  fields: { description: string; speed: 'Very Fast' | 'Fast' | 'Medium'; pricing: ModelPricing; defaultVoice?: string },
): ModelSpec {
  const kind = NON_CHAT[mode];
  return {
    id,
    provider: PROVIDER_OF_OWNER[vendor],
    ownedBy: vendor,
    mode,
    description: fields.description,
    intelligence: kind.intelligence,
    speed: fields.speed,
    inputModalities: kind.inputs,
    outputModalities: kind.outputs,
    contextWindow: null,
    maxOutputTokens: null,
    tools: false,
    ...(fields.defaultVoice !== undefined ? { defaultVoice: fields.defaultVoice } : {}),
    pricing: fields.pricing,
  };
}

const GEMINI_CACHE_NOTE = 'Context caching also bills storage per hour, which is not per request and not in request costs.';

const OPENAI_MODELS: ModelSpec[] = [
  chat('openai', 'gpt-4o', {
    description: 'GPT-4o: versatile multimodal model for text, images and PDFs.',
    intelligence: 'High', speed: 'Fast', inputs: OPENAI_VISION, contextWindow: 128_000, maxOutputTokens: 16_384,
    pricing: perToken(2.5, 10, 1.25),
  }),
  chat('openai', 'gpt-4o-mini', {
    description: 'GPT-4o mini: fast, affordable small model for everyday chat.',
    intelligence: 'Average', speed: 'Very Fast', inputs: OPENAI_VISION, contextWindow: 128_000, maxOutputTokens: 16_384,
    pricing: perToken(0.15, 0.6, 0.075),
  }),
  chat('openai', 'gpt-4.1', {
    description: 'GPT-4.1: strong instruction following and coding with a 1M-token context.',
    intelligence: 'High', speed: 'Fast', inputs: OPENAI_VISION, contextWindow: 1_047_576, maxOutputTokens: 32_768,
    pricing: perToken(2, 8, 0.5),
  }),
  chat('openai', 'gpt-4.1-mini', {
    description: 'GPT-4.1 mini: GPT-4.1 quality at lower cost and latency, 1M-token context.',
    intelligence: 'High', speed: 'Very Fast', inputs: OPENAI_VISION, contextWindow: 1_047_576, maxOutputTokens: 32_768,
    pricing: perToken(0.4, 1.6, 0.1),
  }),
  chat('openai', 'gpt-4.1-nano', {
    description: 'GPT-4.1 nano: the fastest, cheapest GPT-4.1 model for classification and extraction.',
    intelligence: 'Average', speed: 'Very Fast', inputs: OPENAI_VISION, contextWindow: 1_047_576, maxOutputTokens: 32_768,
    pricing: perToken(0.1, 0.4, 0.025),
  }),
  chat('openai', 'gpt-5', {
    description: 'GPT-5: reasoning model for coding and agentic tasks.',
    intelligence: 'Higher', speed: 'Medium', inputs: OPENAI_VISION, contextWindow: 400_000, maxOutputTokens: 128_000,
    reasoning: true,
    pricing: perToken(1.25, 10, 0.125, { note: 'Reasoning tokens are billed as output tokens.' }),
  }),
  chat('openai', 'gpt-5-mini', {
    description: 'GPT-5 mini: faster, cheaper GPT-5 for well-defined tasks.',
    intelligence: 'High', speed: 'Fast', inputs: OPENAI_VISION, contextWindow: 400_000, maxOutputTokens: 128_000,
    reasoning: true,
    pricing: perToken(0.25, 2, 0.025, { note: 'Reasoning tokens are billed as output tokens.' }),
  }),
  chat('openai', 'gpt-5-nano', {
    description: 'GPT-5 nano: the fastest, cheapest GPT-5 for summarisation and classification.',
    intelligence: 'Average', speed: 'Very Fast', inputs: OPENAI_VISION, contextWindow: 400_000, maxOutputTokens: 128_000,
    reasoning: true,
    pricing: perToken(0.05, 0.4, 0.005, { note: 'Reasoning tokens are billed as output tokens.' }),
  }),
  chat('openai', 'o3', {
    description: 'o3: reasoning model for math, science, coding and visual reasoning.',
    intelligence: 'Higher', speed: 'Medium', inputs: OPENAI_VISION, contextWindow: 200_000, maxOutputTokens: 100_000,
    reasoning: true,
    pricing: perToken(2, 8, 0.5, { note: 'Reasoning tokens are billed as output tokens.' }),
  }),
  chat('openai', 'o3-mini', {
    description: 'o3-mini: small text-only reasoning model for STEM tasks.',
    intelligence: 'Higher', speed: 'Medium', inputs: ['text'], contextWindow: 200_000, maxOutputTokens: 100_000,
    reasoning: true,
    pricing: perToken(1.1, 4.4, 0.55, { note: 'Reasoning tokens are billed as output tokens.' }),
  }),
  chat('openai', 'o4-mini', {
    description: 'o4-mini: fast, affordable reasoning model with image input.',
    intelligence: 'Higher', speed: 'Fast', inputs: OPENAI_VISION, contextWindow: 200_000, maxOutputTokens: 100_000,
    reasoning: true,
    pricing: perToken(1.1, 4.4, 0.275, { note: 'Reasoning tokens are billed as output tokens.' }),
  }),
  nonChat('openai', 'text-embedding-3-small', 'embedding', {
    description: 'Small, efficient text embedding model (1536 dimensions).', speed: 'Very Fast',
    pricing: perToken(0.02, null, null),
  }),
  nonChat('openai', 'text-embedding-3-large', 'embedding', {
    description: 'Most capable OpenAI text embedding model (3072 dimensions).', speed: 'Fast',
    pricing: perToken(0.13, null, null),
  }),
  nonChat('openai', 'gpt-image-1', 'image_generation', {
    description: 'GPT Image 1: high-fidelity image generation from text prompts.', speed: 'Medium',
    pricing: perImage(0.011, { status: 'starts_at', note: 'Billed per token ($5 text input, $40 image output per 1M tokens); a 1024x1024 image costs about $0.011 (low), $0.042 (medium) or $0.167 (high quality).' }),
  }),
  nonChat('openai', 'gpt-image-1-mini', 'image_generation', {
    description: 'GPT Image 1 mini: cheaper, faster GPT Image model.', speed: 'Fast',
    pricing: perImage(0.005, { status: 'starts_at', note: 'Billed per token; a 1024x1024 image costs about $0.005 (low), $0.011 (medium) or $0.036 (high quality).' }),
  }),
  nonChat('openai', 'dall-e-3', 'image_generation', {
    description: 'DALL·E 3 image generation.', speed: 'Medium',
    pricing: perImage(0.04, { status: 'starts_at', note: 'Standard 1024x1024 $0.04; 1024x1792 or 1792x1024 $0.08; HD $0.08 to $0.12.' }),
  }),
  nonChat('openai', 'tts-1', 'audio_speech', {
    description: 'Text-to-speech optimised for low latency.', speed: 'Very Fast', defaultVoice: 'alloy',
    pricing: perMinute(0.015, { status: 'docs_inferred', note: 'Listed at $15 per 1M input characters; the per-minute price assumes about 1,000 characters per minute of speech.' }),
  }),
  nonChat('openai', 'tts-1-hd', 'audio_speech', {
    description: 'Text-to-speech optimised for quality.', speed: 'Fast', defaultVoice: 'alloy',
    pricing: perMinute(0.03, { status: 'docs_inferred', note: 'Listed at $30 per 1M input characters; the per-minute price assumes about 1,000 characters per minute of speech.' }),
  }),
  nonChat('openai', 'gpt-4o-mini-tts', 'audio_speech', {
    description: 'Steerable text-to-speech built on GPT-4o mini.', speed: 'Fast', defaultVoice: 'alloy',
    pricing: perMinute(0.015, { status: 'docs_inferred', note: "OpenAI's published estimate; billed as $0.60 per 1M text input tokens and $12 per 1M audio output tokens." }),
  }),
  nonChat('openai', 'whisper-1', 'audio_transcription', {
    description: 'Whisper speech recognition.', speed: 'Fast',
    pricing: perMinute(0.006),
  }),
  nonChat('openai', 'gpt-4o-transcribe', 'audio_transcription', {
    description: 'Speech-to-text built on GPT-4o, more accurate than Whisper.', speed: 'Fast',
    pricing: perMinute(0.006, { status: 'docs_inferred', note: "OpenAI's published estimate; billed as $6 per 1M audio input tokens and $10 per 1M text output tokens." }),
  }),
  nonChat('openai', 'gpt-4o-mini-transcribe', 'audio_transcription', {
    description: 'Speech-to-text built on GPT-4o mini.', speed: 'Very Fast',
    pricing: perMinute(0.003, { status: 'docs_inferred', note: "OpenAI's published estimate; billed as $3 per 1M audio input tokens and $5 per 1M text output tokens." }),
  }),
];

const GOOGLE_MODELS: ModelSpec[] = [
  chat('google', 'gemini-2.5-pro', {
    description: 'Gemini 2.5 Pro: thinking model for complex reasoning and coding, 1M-token multimodal context.',
    intelligence: 'Higher', speed: 'Medium', inputs: GEMINI_MULTIMODAL, contextWindow: 1_048_576, maxOutputTokens: 65_536,
    reasoning: true, webSearch: true,
    pricing: perTokenByPromptSize({ input: 1.25, output: 10, cachedInput: 0.125 }, 200_000, { input: 2.5, output: 15, cachedInput: 0.25 }, { note: GEMINI_CACHE_NOTE }),
  }),
  chat('google', 'gemini-2.5-flash', {
    description: 'Gemini 2.5 Flash: fast thinking model with the best price-performance, 1M-token context.',
    intelligence: 'High', speed: 'Very Fast', inputs: GEMINI_MULTIMODAL, contextWindow: 1_048_576, maxOutputTokens: 65_536,
    reasoning: true, webSearch: true,
    pricing: perToken(0.3, 2.5, 0.03, { note: 'Input price for text, image and video; audio input costs $1.00 per 1M tokens.' }),
  }),
  chat('google', 'gemini-2.5-flash-lite', {
    description: 'Gemini 2.5 Flash-Lite: the fastest, most cost-efficient Gemini 2.5 model.',
    intelligence: 'Average', speed: 'Very Fast', inputs: GEMINI_MULTIMODAL, contextWindow: 1_048_576, maxOutputTokens: 65_536,
    reasoning: true, webSearch: true,
    pricing: perToken(0.1, 0.4, 0.01, { note: 'Input price for text, image and video; audio input costs $0.30 per 1M tokens.' }),
  }),
  chat('google', 'gemini-2.0-flash', {
    description: 'Gemini 2.0 Flash: fast multimodal workhorse with a 1M-token context.',
    intelligence: 'Average', speed: 'Very Fast', inputs: GEMINI_MULTIMODAL, contextWindow: 1_048_576, maxOutputTokens: 8_192,
    webSearch: true,
    pricing: perToken(0.1, 0.4, 0.025, { note: 'Input price for text, image and video; audio input costs $0.70 per 1M tokens.' }),
  }),
  chat('google', 'gemini-2.0-flash-lite', {
    description: 'Gemini 2.0 Flash-Lite: lowest-cost Gemini 2.0 model.',
    intelligence: 'Average', speed: 'Very Fast', inputs: GEMINI_MULTIMODAL, contextWindow: 1_048_576, maxOutputTokens: 8_192,
    webSearch: true,
    pricing: perToken(0.075, 0.3, null),
  }),
  chat('google', 'gemini-3-pro-preview', {
    description: 'Gemini 3 Pro (preview): most capable Gemini model for reasoning and agentic coding.',
    intelligence: 'Higher', speed: 'Medium', inputs: GEMINI_MULTIMODAL, contextWindow: 1_048_576, maxOutputTokens: 65_536,
    reasoning: true, webSearch: true,
    pricing: perTokenByPromptSize({ input: 2, output: 12, cachedInput: 0.2 }, 200_000, { input: 4, output: 18, cachedInput: 0.4 }, { note: `Preview pricing. ${GEMINI_CACHE_NOTE}` }),
  }),
  nonChat('google', 'gemini-embedding-001', 'embedding', {
    description: 'Gemini text embedding model (up to 3072 dimensions).', speed: 'Fast',
    pricing: perToken(0.15, null, null),
  }),
  nonChat('google', 'imagen-4.0-generate-001', 'image_generation', {
    description: 'Imagen 4: high-quality text-to-image generation.', speed: 'Medium',
    pricing: perImage(0.04, { note: 'Flat price per generated image.' }),
  }),
  nonChat('google', 'imagen-4.0-fast-generate-001', 'image_generation', {
    description: 'Imagen 4 Fast: quicker, cheaper Imagen 4 generation.', speed: 'Fast',
    pricing: perImage(0.02, { note: 'Flat price per generated image.' }),
  }),
  nonChat('google', 'imagen-4.0-ultra-generate-001', 'image_generation', {
    description: 'Imagen 4 Ultra: highest prompt adherence of the Imagen 4 family.', speed: 'Medium',
    pricing: perImage(0.06, { note: 'Flat price per generated image.' }),
  }),
];

/*
 * Claude prices as Anthropic's pricing page lists them: cache hits 0.1× input, 5-minute cache
 * writes 1.25× and 1-hour writes 2×. Sonnet 4 and 4.5 with the 1M-token context (beta) cost
 * more for prompts over 200k tokens, cache prices scaled alike.
 */
const CLAUDE_SONNET_4: ModelPricing = perTokenByPromptSize(
  { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 },
  200_000,
  { input: 6, output: 22.5, cachedInput: 0.6, cacheWrite: 7.5, cacheWrite1h: 12 },
);

function claude(list: TokenPriceList): ModelPricing {
  return price(tokenPrices(list), {});
}

const ANTHROPIC_MODELS: ModelSpec[] = [
  chat('anthropic', 'claude-sonnet-4-5', {
    description: 'Claude Sonnet 4.5: best Claude model for complex agents and coding.',
    intelligence: 'Higher', speed: 'Fast', inputs: CLAUDE_VISION, contextWindow: 200_000, maxOutputTokens: 64_000,
    reasoning: true, webSearch: true,
    pricing: CLAUDE_SONNET_4,
  }),
  chat('anthropic', 'claude-haiku-4-5', {
    description: 'Claude Haiku 4.5: fastest Claude model with near-frontier intelligence.',
    intelligence: 'High', speed: 'Very Fast', inputs: CLAUDE_VISION, contextWindow: 200_000, maxOutputTokens: 64_000,
    reasoning: true, webSearch: true,
    pricing: claude({ input: 1, output: 5, cachedInput: 0.1, cacheWrite: 1.25, cacheWrite1h: 2 }),
  }),
  chat('anthropic', 'claude-opus-4-5', {
    description: 'Claude Opus 4.5: most intelligent Claude model for demanding reasoning.',
    intelligence: 'Higher', speed: 'Medium', inputs: CLAUDE_VISION, contextWindow: 200_000, maxOutputTokens: 64_000,
    reasoning: true, webSearch: true,
    pricing: claude({ input: 5, output: 25, cachedInput: 0.5, cacheWrite: 6.25, cacheWrite1h: 10 }),
  }),
  chat('anthropic', 'claude-opus-4-1', {
    description: 'Claude Opus 4.1: previous-generation Opus for specialised reasoning.',
    intelligence: 'Higher', speed: 'Medium', inputs: CLAUDE_VISION, contextWindow: 200_000, maxOutputTokens: 32_000,
    reasoning: true, webSearch: true,
    pricing: claude({ input: 15, output: 75, cachedInput: 1.5, cacheWrite: 18.75, cacheWrite1h: 30 }),
  }),
  chat('anthropic', 'claude-sonnet-4-20250514', {
    description: 'Claude Sonnet 4: previous-generation Sonnet, balanced speed and intelligence.',
    intelligence: 'High', speed: 'Fast', inputs: CLAUDE_VISION, contextWindow: 200_000, maxOutputTokens: 64_000,
    reasoning: true, webSearch: true,
    pricing: CLAUDE_SONNET_4,
  }),
  chat('anthropic', 'claude-3-5-haiku-20241022', {
    description: 'Claude Haiku 3.5: legacy fast Claude model.',
    intelligence: 'Average', speed: 'Very Fast', inputs: CLAUDE_VISION, contextWindow: 200_000, maxOutputTokens: 8_192,
    webSearch: true,
    pricing: claude({ input: 0.8, output: 4, cachedInput: 0.08, cacheWrite: 1, cacheWrite1h: 1.6 }),
  }),
];

function prefix(value: string, vendor: VendorOwner, mode: ModelMode): SafePrefix {
  return { prefix: value, provider: PROVIDER_OF_OWNER[vendor], ownedBy: vendor, mode };
}

/** The vendors' release dates (their announcements; a Claude model's snapshot date), shown as `created`. */
const RELEASED: Readonly<Record<string, string>> = {
  'gpt-4o': '2024-05-13',
  'gpt-4o-mini': '2024-07-18',
  'gpt-4.1': '2025-04-14',
  'gpt-4.1-mini': '2025-04-14',
  'gpt-4.1-nano': '2025-04-14',
  'gpt-5': '2025-08-07',
  'gpt-5-mini': '2025-08-07',
  'gpt-5-nano': '2025-08-07',
  o3: '2025-04-16',
  'o3-mini': '2025-01-31',
  'o4-mini': '2025-04-16',
  'text-embedding-3-small': '2024-01-25',
  'text-embedding-3-large': '2024-01-25',
  'gpt-image-1': '2025-04-23',
  'dall-e-3': '2023-11-06',
  'tts-1': '2023-11-06',
  'tts-1-hd': '2023-11-06',
  'gpt-4o-mini-tts': '2025-03-20',
  'whisper-1': '2023-03-01',
  'gpt-4o-transcribe': '2025-03-20',
  'gpt-4o-mini-transcribe': '2025-03-20',
  'gemini-2.5-pro': '2025-06-17',
  'gemini-2.5-flash': '2025-06-17',
  'gemini-2.5-flash-lite': '2025-07-22',
  'gemini-2.0-flash': '2025-02-05',
  'gemini-2.0-flash-lite': '2025-02-25',
  'gemini-3-pro-preview': '2025-11-18',
  'gemini-embedding-001': '2025-07-14',
  'claude-sonnet-4-5': '2025-09-29',
  'claude-haiku-4-5': '2025-10-01',
  'claude-opus-4-5': '2025-11-01',
  'claude-opus-4-1': '2025-08-05',
  'claude-sonnet-4-20250514': '2025-05-14',
  'claude-3-5-haiku-20241022': '2024-10-22',
};

export const DEFAULT_CATALOG: CatalogData = {
  models: [...OPENAI_MODELS, ...GOOGLE_MODELS, ...ANTHROPIC_MODELS].map((spec) => (RELEASED[spec.id] === undefined ? spec : { ...spec, released: RELEASED[spec.id] })),
  legacyAliases: {
    gpt4o: 'gpt-4o',
    'gpt4o-mini': 'gpt-4o-mini',
    'gemini-pro': 'gemini-2.5-pro',
    'gemini-flash': 'gemini-2.5-flash',
    'gemini-flash-lite': 'gemini-2.5-flash-lite',
    'claude-sonnet': 'claude-sonnet-4-5',
    'claude-haiku': 'claude-haiku-4-5',
    'claude-opus': 'claude-opus-4-5',
    'claude-3-5-haiku-latest': 'claude-3-5-haiku-20241022',
    'text-embedding': 'text-embedding-3-small',
    dalle3: 'dall-e-3',
    imagen: 'imagen-4.0-generate-001',
    tts: 'tts-1',
    whisper: 'whisper-1',
  },
  // The dated snapshots the vendors list at the same price as the model (clients send them by
  // default: Claude Code its Haiku and Sonnet snapshots, the OpenAI SDKs' examples their dated ids).
  snapshots: {
    'gpt-4o-2024-08-06': 'gpt-4o',
    'gpt-4o-2024-11-20': 'gpt-4o',
    'gpt-4o-mini-2024-07-18': 'gpt-4o-mini',
    'gpt-4.1-2025-04-14': 'gpt-4.1',
    'gpt-4.1-mini-2025-04-14': 'gpt-4.1-mini',
    'gpt-4.1-nano-2025-04-14': 'gpt-4.1-nano',
    'gpt-5-2025-08-07': 'gpt-5',
    'gpt-5-mini-2025-08-07': 'gpt-5-mini',
    'gpt-5-nano-2025-08-07': 'gpt-5-nano',
    'o3-2025-04-16': 'o3',
    'o3-mini-2025-01-31': 'o3-mini',
    'o4-mini-2025-04-16': 'o4-mini',
    'gemini-2.0-flash-001': 'gemini-2.0-flash',
    'gemini-2.0-flash-lite-001': 'gemini-2.0-flash-lite',
    'gemini-2.5-flash-preview-09-2025': 'gemini-2.5-flash',
    'gemini-2.5-flash-lite-preview-09-2025': 'gemini-2.5-flash-lite',
    'claude-sonnet-4-5-20250929': 'claude-sonnet-4-5',
    'claude-haiku-4-5-20251001': 'claude-haiku-4-5',
    'claude-opus-4-5-20251101': 'claude-opus-4-5',
    'claude-opus-4-1-20250805': 'claude-opus-4-1',
  },
  serviceAliases: {
    'service-1': 'gpt-4o-mini',
    'service-2': 'gpt-4.1',
    'service-3': 'gemini-2.5-flash',
    'service-4': 'claude-sonnet-4-5',
    'service-5': 'gemini-2.5-pro',
  },
  defaultChatModel: 'gpt-4o-mini',
  // The longest matching prefix wins (the Catalog sorts them), so the specific
  // 'gpt-image-' or 'gemini-embedding' beat the family-wide 'gpt-' or 'gemini-'.
  safePrefixes: [
    prefix('gpt-', 'openai', 'chat'),
    prefix('chatgpt-', 'openai', 'chat'),
    prefix('o1', 'openai', 'chat'),
    prefix('o3', 'openai', 'chat'),
    prefix('o4', 'openai', 'chat'),
    prefix('gpt-image-', 'openai', 'image_generation'),
    prefix('gpt-4o-transcribe', 'openai', 'audio_transcription'),
    prefix('gpt-4o-mini-transcribe', 'openai', 'audio_transcription'),
    prefix('gpt-4o-mini-tts', 'openai', 'audio_speech'),
    prefix('text-embedding-3', 'openai', 'embedding'),
    prefix('dall-e-', 'openai', 'image_generation'),
    prefix('tts-', 'openai', 'audio_speech'),
    prefix('whisper-', 'openai', 'audio_transcription'),
    prefix('gemini-', 'google', 'chat'),
    prefix('gemini-embedding', 'google', 'embedding'),
    prefix('imagen-', 'google', 'image_generation'),
    prefix('claude-', 'anthropic', 'chat'),
  ],
};
