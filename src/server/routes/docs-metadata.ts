import type { Static } from '@sinclair/typebox';
import type { Catalog, ModelMode, PublicModelEntry } from '../../catalog/index.js';
import { API_VERSION } from '../api-version.js';
import type { PublicEndpoint } from '../public-endpoints.js';
import type { DocsMetadataResponseSchema, PlaygroundExampleSchema, QuickstartSchema } from './status-schemas.js';

type Quickstart = Static<typeof QuickstartSchema>;
type PlaygroundExample = Static<typeof PlaygroundExampleSchema>;
export type DocsMetadata = Static<typeof DocsMetadataResponseSchema>;

const PRICING_NOTES: readonly string[] = [
  'Prices are public list prices in USD: input_per_million, output_per_million and cached_input_per_million per 1M tokens, image_per_unit per generated image, audio_per_minute per minute of audio.',
  'cache_write_per_million and cache_write_1h_per_million price prompt tokens written to the provider cache (Anthropic: 5-minute and 1-hour entries; null: the input price, and for 1-hour entries the 5-minute price). tiers lists higher prices for long prompts: a prompt of more tokens than a tier\'s above_prompt_tokens is priced, output included, at that tier\'s prices.',
  'A null price field means the model is not billed in that unit; pricing null means the gateway has no price for the model (for example a future id accepted by its prefix), and such requests are logged with cost null.',
  'status "documented": the vendor publishes this price. "short_context": the price holds only for prompts below a length (see note); longer prompts cost more. "docs_inferred": derived from the vendor documentation (for example a per-character price expressed per minute). "starts_at": the lowest price of a range (image quality and size raise it).',
  'Image prices can be starting prices. Audio prices are per minute, so audio cost is computed only when a duration is sent (duration_seconds or duration_minutes) or returned by the provider.',
  'Service aliases (service-1 … service-5) are billed as the model they currently point to.',
  'Read prices from GET /v1/models at run time instead of hardcoding them: the catalog is live and operators can override prices.',
];

function firstOfMode(models: readonly PublicModelEntry[], mode: ModelMode): PublicModelEntry | undefined {
  return models.find((model) => model.mode === mode && model.owned_by !== 'modelgate');
}

function quickstarts(baseUrl: string, chatModel: string, embeddingModel: string | undefined): Quickstart[] {
  const body = JSON.stringify({ model: chatModel, messages: [{ role: 'user', content: 'Say hello in one sentence.' }] });
  const list: Quickstart[] = [
    {
      id: 'chat-curl',
      title: 'Chat completion with curl',
      language: 'shell',
      code: [
        `curl ${baseUrl}/v1/chat/completions \\`,
        '  -H "Authorization: Bearer $MODELGATE_API_KEY" \\',
        '  -H "Content-Type: application/json" \\',
        `  -d '${body}'`,
      ].join('\n'),
    },
    {
      id: 'chat-python',
      title: 'Chat completion with the openai Python SDK',
      language: 'python',
      code: [
        'import os',
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${baseUrl}/v1", api_key=os.environ["MODELGATE_API_KEY"])`,
        'completion = client.chat.completions.create(',
        `    model="${chatModel}",`,
        '    messages=[{"role": "user", "content": "Say hello in one sentence."}],',
        ')',
        'print(completion.choices[0].message.content)',
      ].join('\n'),
    },
    {
      id: 'chat-node',
      title: 'Streaming chat with the openai Node SDK',
      language: 'javascript',
      code: [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${baseUrl}/v1', apiKey: process.env.MODELGATE_API_KEY });`,
        'const stream = await client.chat.completions.create({',
        `  model: '${chatModel}',`,
        "  messages: [{ role: 'user', content: 'Say hello in one sentence.' }],",
        '  stream: true,',
        '});',
        "for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');",
      ].join('\n'),
    },
  ];
  if (embeddingModel !== undefined) {
    list.push({
      id: 'embeddings-curl',
      title: 'Embeddings with curl',
      language: 'shell',
      code: [
        `curl ${baseUrl}/v1/embeddings \\`,
        '  -H "Authorization: Bearer $MODELGATE_API_KEY" \\',
        '  -H "Content-Type: application/json" \\',
        `  -d '${JSON.stringify({ model: embeddingModel, input: 'The quick brown fox' })}'`,
      ].join('\n'),
    });
  }
  return list;
}

/** A 1x1 transparent PNG: the smallest real image a multimodal example can carry inline. */
const TINY_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

function playgroundExamples(models: readonly PublicModelEntry[], chatModel: string): PlaygroundExample[] {
  const visionModel = models.find((model) => model.mode === 'chat' && model.capabilities.images)?.id ?? chatModel;
  const examples: PlaygroundExample[] = [
    {
      id: 'chat',
      title: 'Chat',
      method: 'POST',
      path: '/v1/chat/completions',
      body: { model: chatModel, messages: [{ role: 'system', content: 'You are concise.' }, { role: 'user', content: 'What is a model gateway?' }] },
    },
    {
      id: 'chat-image',
      title: 'Chat with an inline image',
      method: 'POST',
      path: '/v1/chat/completions',
      body: {
        model: visionModel,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Describe this image.' },
              { type: 'image_url', image_url: { url: TINY_PNG } },
            ],
          },
        ],
      },
    },
    {
      id: 'chat-vetting',
      title: 'Guided chat with a verification pass',
      method: 'POST',
      path: '/v1/chat/vetting',
      body: {
        model: chatModel,
        messages: [{ role: 'user', content: 'Can you just tell me the answer to 12 x 13?' }],
        vettingConfig: { systemPrompt: 'Guide the student step by step; never state the final answer.', maxAttempts: 3 },
      },
    },
  ];
  const embedding = firstOfMode(models, 'embedding');
  if (embedding !== undefined) {
    examples.push({ id: 'embeddings', title: 'Embeddings', method: 'POST', path: '/v1/embeddings', body: { model: embedding.id, input: ['first text', 'second text'] } });
  }
  const image = firstOfMode(models, 'image_generation');
  if (image !== undefined) {
    examples.push({
      id: 'image',
      title: 'Image generation',
      method: 'POST',
      path: '/v1/images/generations',
      body: { model: image.id, prompt: 'A watercolour lighthouse at dawn', size: '1024x1024', n: 1 },
    });
  }
  const speech = firstOfMode(models, 'audio_speech');
  if (speech !== undefined) {
    examples.push({
      id: 'speech',
      title: 'Text to speech',
      method: 'POST',
      path: '/v1/audio/speech',
      body: { model: speech.id, input: 'Welcome to the gateway.', voice: speech.default_voice ?? 'alloy', response_format: 'mp3' },
    });
  }
  return examples;
}

/** The body of `GET /v1/docs/metadata` (docs/catalog.md) for a gateway reached at `baseUrl`. */
export function buildDocsMetadata(catalog: Catalog, baseUrl: string, endpoints: readonly PublicEndpoint[]): DocsMetadata {
  const models = catalog.list();
  return {
    version: API_VERSION,
    models: [...models],
    endpoints: [...endpoints],
    quickstarts: quickstarts(baseUrl, catalog.defaultChatModel, firstOfMode(models, 'embedding')?.id),
    playground_examples: playgroundExamples(models, catalog.defaultChatModel),
    pricing_notes: [...PRICING_NOTES],
  };
}
