import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { MISTRAL_KEY, startFakeMistral } from './fakes/mistral.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runProviderConformance, type ConformanceFake } from './providers/conformance.js';

/* Mistral natively: the shared conformance suite, then the fields Mistral names its own way. */

runProviderConformance({
  name: 'mistral',
  startFake: startFakeMistral,
  gateway: (fakeUrl) => ({ env: { MISTRAL_API_KEY: MISTRAL_KEY, MISTRAL_BASE_URL: `${fakeUrl}/v1` }, configFile: { catalog: { models: [{ id: 'pixtral-files', provider: 'mistral', upstreamId: 'mistral-small-latest', input_modalities: ['text', 'image'] }] } } }),
  chatModel: 'pixtral-files',
  upstreamKey: MISTRAL_KEY,
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'The model `mistral-small-latest` does not exist or you do not have access to it.',
  providerRequestId: /^req_fake$/,
  providerRequestIdOnError: true,
  takesClientRequestId: true,
  capabilityModels: { embeddings: 'mistral-embed' },
  skip: {
    'pdf-file': "Mistral's chat takes no inline documents (a 400 naming the part)",
    images: 'the Mistral adapter serves no image models',
    speech: 'Mistral has no speech API',
    transcription: 'the Mistral adapter serves no transcription models',
  },
});

describe('Mistral on its own', () => {
  let fake: ConformanceFake;
  let gateway: TestGateway;
  let client: OpenAI;
  before(async () => {
    fake = await startFakeMistral();
    gateway = await startTestGateway({ env: { MISTRAL_API_KEY: MISTRAL_KEY, MISTRAL_BASE_URL: `${fake.server.url}/v1` } });
    client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test("seed, max_completion_tokens and tool_choice required in Mistral's words; hints it has none for are left out and named", async () => {
    fake.scriptChat({ kind: 'reply', text: 'Done.', usage: { promptTokens: 3, completionTokens: 1 } });
    const { response } = await client.chat.completions
      .create({
        model: 'mistral-large-latest',
        seed: 7,
        max_completion_tokens: 20,
        user: 'someone',
        tool_choice: 'required',
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .withResponse();
    const sent = fake.server.requests.at(-1)!.json;
    assert.equal(sent.random_seed, 7);
    assert.equal(sent.max_tokens, 20);
    assert.equal(sent.tool_choice, 'any');
    assert.equal(sent.seed, undefined);
    assert.equal(sent.user, undefined);
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.ok(record.detail?.droppedFields?.includes('user'), JSON.stringify(record.detail));
  });
});
