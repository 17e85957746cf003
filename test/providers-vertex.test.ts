import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFakeVertex, vertexEnv, VERTEX_LOCATION, VERTEX_PROJECT, type VertexFake } from './fakes/vertex.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runProviderConformance } from './providers/conformance.js';

/*
 * Google Vertex AI: the shared conformance suite for Gemini and for Claude on Vertex (each
 * behind the Vertex fake, which exchanges a service account's signed JWT for access tokens),
 * then Vertex's own: the token reused across calls, Claude's Messages API natively, predict.
 */

const FIRST_TOKEN = 'ya29.fake-access-token-1';
const envOf = vertexEnv;

let geminiFake: VertexFake;
runProviderConformance({
  name: 'vertex',
  startFake: async () => (geminiFake = await startFakeVertex('google')),
  gateway: () => ({ env: envOf(geminiFake) }),
  chatModel: 'vertex/gemini-2.5-flash',
  upstreamKey: FIRST_TOKEN,
  acceptsRemoteImageUrls: false,
  notFoundMessage: 'models/gemini-2.5-flash is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.',
  providerRequestId: /^[\w-]{22}$/,
  providerRequestIdOnError: false,
  takesClientRequestId: false,
  capabilityModels: { embeddings: 'vertex/gemini-embedding-001' },
  skip: { images: 'Imagen on Vertex is not served by this adapter', speech: 'Vertex AI has no speech endpoint here', transcription: 'Vertex AI has no transcription endpoint here' },
});

let claudeFake: VertexFake;
runProviderConformance({
  name: 'vertex',
  startFake: async () => (claudeFake = await startFakeVertex('anthropic')),
  gateway: () => ({ env: envOf(claudeFake) }),
  chatModel: 'vertex/claude-sonnet-4-5@20250929',
  upstreamKey: FIRST_TOKEN,
  acceptsRemoteImageUrls: false,
  notFoundMessage: 'model: claude-sonnet-4-5@20250929',
  providerRequestId: /^req_01\w+$/,
  providerRequestIdOnError: true,
  takesClientRequestId: false,
  capabilityModels: {},
  skip: { embeddings: 'Claude has no embeddings', images: 'Claude makes no images', speech: 'Claude has no speech', transcription: 'Claude has no transcription' },
});

describe('Vertex AI on its own', () => {
  let fake: VertexFake;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    fake = await startFakeVertex('anthropic');
    gateway = await startTestGateway({ env: envOf(fake) });
    const key = await gateway.createKey({ scopes: ['model:request'] });
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test("the service account's token is exchanged once and reused; Claude goes to rawPredict without model, with anthropic_version", async () => {
    for (let index = 0; index < 2; index += 1) {
      fake.scriptChat({ kind: 'reply', text: 'Hi.', usage: { promptTokens: 3, completionTokens: 1 } });
      await openai.chat.completions.create({ model: 'vertex/claude-sonnet-4-5@20250929', messages: [{ role: 'user', content: 'Hi' }] });
    }
    assert.equal(fake.tokenRequests().length, 1, 'one exchange; the token is renewed only near its expiry');
    const sent = fake.server.requests.filter((request) => request.path.startsWith('/v1/projects/'));
    assert.equal(sent[0]!.path, `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/anthropic/models/claude-sonnet-4-5%4020250929:rawPredict`);
    assert.equal(sent[0]!.headers.authorization, `Bearer ${FIRST_TOKEN}`);
    assert.equal(sent[0]!.json.anthropic_version, 'vertex-2023-10-16');
    assert.equal(sent[0]!.json.model, undefined);
  });

  test("Claude's Messages API natively, streamed: streamRawPredict", async () => {
    fake.scriptChat({ kind: 'stream', deltas: ['Hel', 'lo.'], usage: { promptTokens: 3, completionTokens: 2 } });
    const final = await anthropic.messages.stream({ model: 'vertex/claude-sonnet-4-5@20250929', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    assert.equal(final.content[0]?.type === 'text' ? final.content[0].text : null, 'Hello.');
    const sent = fake.server.requests.at(-1)!;
    assert.match(sent.path, /:streamRawPredict$/);
    assert.equal(sent.json.stream, true);
    assert.equal(sent.json.model, undefined);
  });

  test('text-embedding-005 takes every input in one predict call', async () => {
    const result = await openai.embeddings.create({ model: 'vertex/text-embedding-005', input: ['alpha', 'beta'], encoding_format: 'float' });
    assert.equal(result.data.length, 2);
    const sent = fake.server.requests.at(-1)!;
    assert.match(sent.path, /publishers\/google\/models\/text-embedding-005:predict$/);
    assert.deepEqual(sent.json.instances, [{ content: 'alpha' }, { content: 'beta' }]);
  });
});
