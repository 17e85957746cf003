import { describe, test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runProviderConformance } from './providers/conformance.js';
import { VENDOR_PROVIDERS } from '../src/providers/index.js';

/*
 * The OpenAI-compatible presets: each is data (src/providers/presets/hosts.ts) over the
 * OpenAI-compatible adapter. A hosted one (Groq) and a local one (Ollama) run the shared
 * conformance suite against the OpenAI fake; then a preset's shipped catalog.
 */

const GROQ_KEY = 'gsk_fake-groq-key-0123456789';
const FULL_MODALITIES = ['text', 'image', 'file', 'pdf'];

runProviderConformance({
  name: 'groq',
  startFake: startOpenAIFake,
  gateway: (fakeUrl) => ({
    env: { GROQ_API_KEY: GROQ_KEY, GROQ_BASE_URL: `${fakeUrl}/v1` },
    configFile: {
      catalog: {
        models: [
          { id: 'groq-vision', provider: 'groq', upstreamId: 'meta-llama/llama-4-scout-17b-16e-instruct', input_modalities: FULL_MODALITIES },
          { id: 'groq-embed', provider: 'groq', mode: 'embedding' },
          { id: 'groq-image', provider: 'groq', mode: 'image_generation' },
          { id: 'groq-tts', provider: 'groq', mode: 'audio_speech' },
          { id: 'groq-whisper', provider: 'groq', mode: 'audio_transcription' },
        ],
      },
    },
  }),
  chatModel: 'groq-vision',
  upstreamKey: GROQ_KEY,
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'The model `meta-llama/llama-4-scout-17b-16e-instruct` does not exist or you do not have access to it.',
  providerRequestId: /^req_fake$/,
  providerRequestIdOnError: true,
  takesClientRequestId: true,
  capabilityModels: { embeddings: 'groq-embed', images: 'groq-image', speech: 'groq-tts', transcription: 'groq-whisper' },
});

runProviderConformance({
  name: 'ollama',
  startFake: startOpenAIFake,
  gateway: (fakeUrl) => ({
    env: { OLLAMA_BASE_URL: `${fakeUrl}/v1`, OLLAMA_API_KEY: 'ollama-local-key' },
    configFile: {
      catalog: {
        models: [
          { id: 'llama3.2-vision', provider: 'ollama', upstreamId: 'llama3.2-vision:11b', input_modalities: FULL_MODALITIES },
          { id: 'nomic-embed-text', provider: 'ollama', mode: 'embedding' },
        ],
      },
    },
  }),
  chatModel: 'llama3.2-vision',
  upstreamKey: 'ollama-local-key',
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'model "llama3.2-vision:11b" not found, try pulling it first',
  providerRequestId: /^req_fake$/,
  providerRequestIdOnError: true,
  takesClientRequestId: true,
  capabilityModels: { embeddings: 'nomic-embed-text' },
  skip: { images: 'a local chat server: no image model declared', speech: 'no speech model declared', transcription: 'no transcription model declared' },
});

describe("a preset's shipped catalog", () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { GROQ_API_KEY: GROQ_KEY, GROQ_BASE_URL: `${fake.server.url}/v1` } });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('its models are listed under <preset>/<the host\'s id>, priced, and the host gets its own id', async () => {
    const list = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { available_models: { id: string; owned_by: string; pricing: { input_per_million: number; status: string } | null }[] };
    const llama = list.available_models.find((model) => model.id === 'groq/llama-3.3-70b-versatile');
    assert.equal(llama?.owned_by, 'meta');
    assert.equal(llama?.pricing?.input_per_million, 0.59);
    assert.ok(!list.available_models.some((model) => model.id.startsWith('together/')), 'a preset without its key lists nothing');
    fake.scriptChat({ kind: 'reply', text: 'Hi.', usage: { promptTokens: 3, completionTokens: 2 } });
    const client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const { response } = await client.chat.completions.create({ model: 'groq/llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    assert.equal(fake.server.requests.at(-1)?.json.model, 'llama-3.3-70b-versatile');
    assert.equal(response.headers.get('x-modelgate-model'), 'groq/llama-3.3-70b-versatile');
  });

  test('every preset is data over one descriptor maker: a name, a base URL or none (local), its two variables', () => {
    const presets = VENDOR_PROVIDERS.filter((vendor) => vendor.yieldsToCompatible === true);
    assert.ok(presets.length >= 11);
    for (const preset of presets) assert.deepEqual(preset.environment.map((setting) => setting.field), ['apiKey', 'baseUrl'], preset.name);
  });
});
