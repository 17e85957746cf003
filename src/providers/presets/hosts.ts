import { perMillion, type PresetModel } from './preset.js';

/*
 * The OpenAI-compatible hosts the gateway knows, as data: each is `presetDescriptor(<entry>)`
 * in index.ts. Prices are the hosts' public list prices in USD per 1M tokens (checked
 * November 2026); `status` and `note` say where one is inferred.
 */

const TEXT = ['text'];

/** A chat model of a host: its id, limits and price; text in, text out, tools. */
function chat(id: string, description: string, contextWindow: number, maxOutputTokens: number, pricing: PresetModel['pricing'], fields: Partial<PresetModel> = {}): PresetModel {
  return {
    id,
    mode: 'chat',
    description,
    intelligence: 'High',
    speed: 'Very Fast',
    input_modalities: TEXT,
    output_modalities: TEXT,
    context_window: contextWindow,
    max_output_tokens: maxOutputTokens,
    tools: true,
    pricing,
    ...fields,
  };
}

function embedding(id: string, description: string, pricing: PresetModel['pricing'], owner: string): PresetModel {
  return { id, mode: 'embedding', description, intelligence: 'Embedding', speed: 'Fast', input_modalities: TEXT, output_modalities: ['embedding'], tools: false, pricing, owned_by: owner };
}

const GPT_OSS = 'gpt-oss-120b: OpenAI\'s open-weight reasoning model';

export const HOSTS = {
  groq: {
    name: 'groq',
    owner: 'groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    apiKeyVariable: 'GROQ_API_KEY',
    baseUrlVariable: 'GROQ_BASE_URL',
    models: [
      chat('llama-3.3-70b-versatile', 'Llama 3.3 70B on Groq LPUs.', 131_072, 32_768, perMillion(0.59, 0.79, null), { owned_by: 'meta' }),
      chat('llama-3.1-8b-instant', 'Llama 3.1 8B on Groq LPUs: the fastest, cheapest.', 131_072, 131_072, perMillion(0.05, 0.08, null), { owned_by: 'meta', intelligence: 'Average' }),
      chat('openai/gpt-oss-120b', `${GPT_OSS}, on Groq.`, 131_072, 65_536, perMillion(0.15, 0.75, null), { owned_by: 'openai', intelligence: 'Higher' }),
      chat('openai/gpt-oss-20b', 'gpt-oss-20b: OpenAI\'s small open-weight reasoning model, on Groq.', 131_072, 65_536, perMillion(0.1, 0.5, null), { owned_by: 'openai' }),
      chat('qwen/qwen3-32b', 'Qwen3 32B on Groq.', 131_072, 40_960, perMillion(0.29, 0.59, null), { owned_by: 'alibaba' }),
    ],
  },
  together: {
    name: 'together',
    owner: 'together',
    baseUrl: 'https://api.together.xyz/v1',
    apiKeyVariable: 'TOGETHER_API_KEY',
    baseUrlVariable: 'TOGETHER_BASE_URL',
    models: [
      chat('meta-llama/Llama-3.3-70B-Instruct-Turbo', 'Llama 3.3 70B Instruct Turbo on Together.', 131_072, 32_768, perMillion(0.88, 0.88, null), { owned_by: 'meta' }),
      chat('deepseek-ai/DeepSeek-V3', 'DeepSeek V3 on Together.', 131_072, 32_768, perMillion(1.25, 1.25, null), { owned_by: 'deepseek' }),
      chat('Qwen/Qwen2.5-72B-Instruct-Turbo', 'Qwen2.5 72B Instruct Turbo on Together.', 32_768, 8_192, perMillion(1.2, 1.2, null), { owned_by: 'alibaba' }),
      chat('openai/gpt-oss-120b', `${GPT_OSS}, on Together.`, 131_072, 32_768, perMillion(0.15, 0.6, null), { owned_by: 'openai', intelligence: 'Higher' }),
      embedding('BAAI/bge-large-en-v1.5', 'BGE large English v1.5 embeddings (1024 dimensions) on Together.', perMillion(0.02, null, null), 'baai'),
    ],
  },
  fireworks: {
    name: 'fireworks',
    owner: 'fireworks',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    apiKeyVariable: 'FIREWORKS_API_KEY',
    baseUrlVariable: 'FIREWORKS_BASE_URL',
    models: [
      chat('accounts/fireworks/models/llama-v3p3-70b-instruct', 'Llama 3.3 70B Instruct on Fireworks.', 131_072, 16_384, perMillion(0.9, 0.9, null), { owned_by: 'meta' }),
      chat('accounts/fireworks/models/deepseek-v3', 'DeepSeek V3 on Fireworks.', 131_072, 16_384, perMillion(0.9, 0.9, null), { owned_by: 'deepseek' }),
      chat('accounts/fireworks/models/gpt-oss-120b', `${GPT_OSS}, on Fireworks.`, 131_072, 32_768, perMillion(0.15, 0.6, null), { owned_by: 'openai', intelligence: 'Higher' }),
    ],
  },
  deepseek: {
    name: 'deepseek',
    owner: 'deepseek',
    baseUrl: 'https://api.deepseek.com/v1',
    apiKeyVariable: 'DEEPSEEK_API_KEY',
    baseUrlVariable: 'DEEPSEEK_BASE_URL',
    models: [
      chat('deepseek-chat', 'DeepSeek-V3.2 in non-thinking mode.', 131_072, 8_192, perMillion(0.28, 0.42, 0.028, { note: 'Cache-hit input $0.028 per 1M tokens; cache-miss $0.28.' }), {
        intelligence: 'Higher',
        speed: 'Fast',
      }),
      chat('deepseek-reasoner', 'DeepSeek-V3.2 in thinking mode.', 131_072, 65_536, perMillion(0.28, 0.42, 0.028, { note: 'Reasoning tokens are billed as output tokens.' }), {
        intelligence: 'Higher',
        speed: 'Medium',
      }),
    ],
  },
  xai: {
    name: 'xai',
    owner: 'xai',
    baseUrl: 'https://api.x.ai/v1',
    apiKeyVariable: 'XAI_API_KEY',
    baseUrlVariable: 'XAI_BASE_URL',
    models: [
      chat('grok-4', 'Grok 4: xAI\'s reasoning model with image input.', 256_000, 64_000, perMillion(3, 15, 0.75), { intelligence: 'Higher', speed: 'Medium', input_modalities: ['text', 'image'] }),
      chat('grok-4-fast-reasoning', 'Grok 4 Fast: cost-efficient reasoning with a 2M-token context.', 2_000_000, 30_000, perMillion(0.2, 0.5, 0.05, { note: 'Prompts over 128k tokens cost $0.40 in, $1.00 out per 1M tokens.' }), {
        input_modalities: ['text', 'image'],
      }),
      chat('grok-code-fast-1', 'Grok Code Fast 1: a fast reasoning model for agentic coding.', 256_000, 10_000, perMillion(0.2, 1.5, 0.02)),
      chat('grok-3-mini', 'Grok 3 mini: a small thinking model.', 131_072, 16_384, perMillion(0.3, 0.5, 0.075), { intelligence: 'Average' }),
    ],
  },
  openrouter: {
    name: 'openrouter',
    owner: 'openrouter',
    baseUrl: 'https://openrouter.ai/api/v1',
    apiKeyVariable: 'OPENROUTER_API_KEY',
    baseUrlVariable: 'OPENROUTER_BASE_URL',
    models: [
      chat('anthropic/claude-sonnet-4.5', 'Claude Sonnet 4.5 through OpenRouter.', 1_000_000, 64_000, perMillion(3, 15, 0.3, { status: 'short_context', note: "The provider's list price, passed on by OpenRouter; prompts over 200k tokens cost more. Buying credits carries OpenRouter's fee." }), {
        owned_by: 'anthropic',
        intelligence: 'Higher',
        speed: 'Fast',
        input_modalities: ['text', 'image', 'file', 'pdf'],
      }),
      chat('openai/gpt-4o-mini', 'GPT-4o mini through OpenRouter.', 128_000, 16_384, perMillion(0.15, 0.6, 0.075, { note: "OpenAI's list price, passed on by OpenRouter; buying credits carries OpenRouter's fee." }), {
        owned_by: 'openai',
        intelligence: 'Average',
        input_modalities: ['text', 'image', 'file'],
      }),
      chat('google/gemini-2.5-flash', 'Gemini 2.5 Flash through OpenRouter.', 1_048_576, 65_535, perMillion(0.3, 2.5, 0.03, { note: "Google's list price, passed on by OpenRouter; buying credits carries OpenRouter's fee." }), {
        owned_by: 'google',
        input_modalities: ['text', 'image', 'file', 'pdf', 'audio'],
      }),
    ],
  },
  cerebras: {
    name: 'cerebras',
    owner: 'cerebras',
    baseUrl: 'https://api.cerebras.ai/v1',
    apiKeyVariable: 'CEREBRAS_API_KEY',
    baseUrlVariable: 'CEREBRAS_BASE_URL',
    models: [
      chat('llama-3.3-70b', 'Llama 3.3 70B on Cerebras wafer-scale chips.', 65_536, 8_192, perMillion(0.85, 1.2, null), { owned_by: 'meta' }),
      chat('llama3.1-8b', 'Llama 3.1 8B on Cerebras.', 32_768, 8_192, perMillion(0.1, 0.1, null), { owned_by: 'meta', intelligence: 'Average' }),
      chat('gpt-oss-120b', `${GPT_OSS}, on Cerebras.`, 131_072, 40_960, perMillion(0.35, 0.75, null), { owned_by: 'openai', intelligence: 'Higher' }),
      chat('qwen-3-32b', 'Qwen3 32B on Cerebras.', 65_536, 8_192, perMillion(0.4, 0.8, null), { owned_by: 'alibaba' }),
    ],
  },
  // Local servers: the operator's address; their models are the operator's (catalog.models with provider: <name>).
  ollama: { name: 'ollama', owner: 'ollama', apiKeyVariable: 'OLLAMA_API_KEY', baseUrlVariable: 'OLLAMA_BASE_URL', models: [] },
  vllm: { name: 'vllm', owner: 'vllm', apiKeyVariable: 'VLLM_API_KEY', baseUrlVariable: 'VLLM_BASE_URL', models: [] },
  llamacpp: { name: 'llamacpp', owner: 'llamacpp', apiKeyVariable: 'LLAMACPP_API_KEY', baseUrlVariable: 'LLAMACPP_BASE_URL', models: [] },
  lmstudio: { name: 'lmstudio', owner: 'lmstudio', apiKeyVariable: 'LMSTUDIO_API_KEY', baseUrlVariable: 'LMSTUDIO_BASE_URL', models: [] },
} as const;
