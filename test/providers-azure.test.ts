import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { AZURE_KEY, ENTRA, startFakeAzure, type AzureFake } from './fakes/azure.js';
import { FAKE_AWS, startFakeBedrock } from './fakes/bedrock.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runProviderConformance } from './providers/conformance.js';

/*
 * Azure OpenAI: the shared conformance suite on the v1 API with an api-key, then the deployment
 * paths with an api-version and Entra ID tokens, the Responses API, the deployments' catalog
 * entries, and one routing entry over a Bedrock and an Azure deployment of the same model.
 */

const DEPLOYMENTS = { 'chat-prod': 'gpt-4o', 'embed-prod': 'text-embedding-3-small', 'image-prod': 'dall-e-3', 'tts-prod': 'tts-1', 'whisper-prod': 'whisper-1' };
const deploymentList = Object.entries(DEPLOYMENTS).map(([name, model]) => ({ name, model }));

runProviderConformance({
  name: 'azure',
  startFake: () => startFakeAzure({ apiVersion: 'v1', deployments: DEPLOYMENTS, auth: 'api-key' }),
  gateway: (fakeUrl) => ({ env: { AZURE_OPENAI_ENDPOINT: fakeUrl, AZURE_OPENAI_API_KEY: AZURE_KEY }, configFile: { providers: { azure: { deployments: deploymentList } } } }),
  chatModel: 'azure/chat-prod',
  upstreamKey: AZURE_KEY,
  acceptsRemoteImageUrls: true,
  notFoundMessage: 'The model `chat-prod` does not exist or you do not have access to it.',
  providerRequestId: /^req_fake$/,
  providerRequestIdOnError: true,
  takesClientRequestId: true,
  capabilityModels: { embeddings: 'azure/embed-prod', images: 'azure/image-prod', speech: 'azure/tts-prod', transcription: 'azure/whisper-prod' },
});

describe('Azure OpenAI with an api-version and Entra ID', () => {
  let fake: AzureFake;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeAzure({ apiVersion: '2024-10-21', deployments: DEPLOYMENTS, auth: 'entra' });
    gateway = await startTestGateway({
      env: { AZURE_OPENAI_ENDPOINT: fake.server.url, AZURE_OPENAI_API_VERSION: '2024-10-21', AZURE_TENANT_ID: ENTRA.tenantId, AZURE_CLIENT_ID: ENTRA.clientId, AZURE_CLIENT_SECRET: ENTRA.clientSecret, AZURE_AUTHORITY_HOST: fake.server.url },
      configFile: { providers: { azure: { deployments: deploymentList } } },
    });
    client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('chat goes to the deployment path with the api-version, with a bearer token asked for once and reused', async () => {
    for (const text of ['One.', 'Two.']) {
      fake.scriptChat({ kind: 'reply', text, usage: { promptTokens: 3, completionTokens: 1 } });
      const completion = await client.chat.completions.create({ model: 'azure/chat-prod', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(completion.choices[0]?.message.content, text);
    }
    const sent = fake.server.requests.filter((request) => request.path.startsWith('/openai/'));
    assert.deepEqual(sent.map((request) => request.path), ['/openai/deployments/chat-prod/chat/completions?api-version=2024-10-21', '/openai/deployments/chat-prod/chat/completions?api-version=2024-10-21']);
    assert.equal(fake.tokenRequests().length, 1, 'the token is reused until it nears its expiry');
    assert.match(String(sent[0]!.headers.authorization), /^Bearer eyJ/);
    assert.equal(sent[0]!.headers['api-key'], undefined);
  });

  test('the Responses API goes to Azure natively', async () => {
    const response = await client.responses.create({ model: 'azure/chat-prod', input: 'Hi' });
    assert.ok(response.output_text.length > 0);
    const sent = fake.server.requests.at(-1)!;
    assert.equal(sent.path, '/openai/responses?api-version=2025-04-01-preview');
    assert.equal(sent.json.model, 'chat-prod');
  });

  test("a deployment's catalog entry has its model's properties and price", async () => {
    const list = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { available_models: { id: string; owned_by: string; context_window: number; pricing: { input_per_million: number } }[] };
    const entry = list.available_models.find((model) => model.id === 'azure/chat-prod');
    const gpt4o = list.available_models.find((model) => model.id === 'gpt-4o');
    assert.equal(entry?.owned_by, 'openai');
    assert.equal(entry?.context_window, gpt4o?.context_window);
    assert.equal(entry?.pricing.input_per_million, gpt4o?.pricing.input_per_million);
  });

  test('a refused Entra application is a provider-neutral 502 with the reason in the log', async () => {
    const refused = await startTestGateway({
      env: { AZURE_OPENAI_ENDPOINT: fake.server.url, AZURE_TENANT_ID: ENTRA.tenantId, AZURE_CLIENT_ID: ENTRA.clientId, AZURE_CLIENT_SECRET: 'wrong-secret-0123456789', AZURE_AUTHORITY_HOST: fake.server.url },
      configFile: { providers: { azure: { deployments: deploymentList } } },
    });
    try {
      const refusedClient = new OpenAI({ apiKey: await refused.createKey(), baseURL: `${refused.url}/v1`, maxRetries: 0 });
      await assert.rejects(refusedClient.chat.completions.create({ model: 'azure/chat-prod', messages: [{ role: 'user', content: 'Hi' }] }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.equal(error.status, 502);
        assert.ok(!JSON.stringify(error.error).includes('AADSTS'));
        return true;
      });
    } finally {
      await refused.close();
    }
  });
});

describe('one routing entry over a Bedrock and an Azure deployment of the same model', () => {
  test('each deployment sends its own id of the model; the Azure one serves when Bedrock throttles', async () => {
    const bedrock = await startFakeBedrock();
    const azure = await startFakeAzure({ apiVersion: 'v1', deployments: { 'oss-prod': 'gpt-oss-120b' }, auth: 'api-key' });
    const gateway = await startTestGateway({
      env: { AWS_REGION: FAKE_AWS.region, AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey, BEDROCK_BASE_URL: bedrock.server.url, AZURE_OPENAI_ENDPOINT: azure.server.url, AZURE_OPENAI_API_KEY: AZURE_KEY },
      configFile: {
        catalog: { models: [{ id: 'gpt-oss-120b', provider: 'bedrock', upstreamId: 'openai.gpt-oss-120b-1:0', owned_by: 'openai', context_window: 131072, tools: true }] },
        providers: { azure: { deployments: [{ name: 'oss-prod', model: 'gpt-oss-120b' }] } },
        routing: [{ model: 'gpt-oss-120b', retries: 1, maxRetryWaitMs: 0, deployments: [{ provider: 'bedrock', weight: 1_000_000, settings: { inferenceProfile: 'none' } }, { provider: 'azure' }] }],
      },
    });
    try {
      bedrock.scriptChat({ kind: 'error', status: 429, message: 'Too many requests, please wait before trying again.' });
      azure.scriptChat({ kind: 'reply', text: 'From Azure.', usage: { promptTokens: 2, completionTokens: 2 } });
      const client = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const { data, response } = await client.chat.completions.create({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.equal(data.choices[0]?.message.content, 'From Azure.');
      assert.equal(bedrock.server.requests.at(-1)!.path, '/model/openai.gpt-oss-120b-1%3A0/converse');
      assert.equal(azure.server.requests.at(-1)!.json.model, 'oss-prod', "the Azure deployment's name, from its entry for the same model");
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.deepEqual(
        record.detail.attempts.map((attempt: { provider: string; upstreamStatus?: number }) => [attempt.provider, attempt.upstreamStatus]),
        [['bedrock', 429], ['azure', undefined]],
      );
    } finally {
      await gateway.close();
      await bedrock.close();
      await azure.close();
    }
  });
});
