import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { bedrockEvent, FAKE_AWS, signatureProblem, startFakeBedrock, type BedrockFake } from './fakes/bedrock.js';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from './fakes/anthropic.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runProviderConformance } from './providers/conformance.js';

/*
 * AWS Bedrock: the shared conformance suite against the Bedrock fake (which verifies every
 * request's Signature V4 and streams AWS's binary event stream), then what is Bedrock's own:
 * temporary credentials, inference profile ids in the path, Claude's Messages API natively,
 * Titan and Cohere embeddings, and one routing entry over Anthropic and Bedrock.
 */

const AWS_ENV = (url: string, extra: Record<string, string> = {}) => ({
  AWS_REGION: FAKE_AWS.region,
  AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey,
  BEDROCK_BASE_URL: url,
  ...extra,
});

runProviderConformance({
  name: 'bedrock',
  startFake: () => startFakeBedrock(),
  gateway: (fakeUrl) => ({ env: AWS_ENV(fakeUrl) }),
  chatModel: 'bedrock/amazon.nova-pro-v1:0',
  upstreamKey: FAKE_AWS.accessKeyId,
  acceptsRemoteImageUrls: false,
  notFoundMessage: 'Model not found.',
  providerRequestId: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
  providerRequestIdOnError: true,
  takesClientRequestId: false,
  capabilityModels: { embeddings: 'bedrock/amazon.titan-embed-text-v2:0' },
  skip: { images: 'the Bedrock adapter serves no image models', speech: 'Bedrock has no speech API', transcription: 'Bedrock has no transcription API' },
});

describe('the Bedrock fake follows AWS framing', () => {
  test("its event stream decodes with AWS's own codec", () => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const message = codec.decode(bedrockEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }));
    assert.equal(message.headers[':event-type']?.value, 'contentBlockDelta');
    assert.deepEqual(JSON.parse(Buffer.from(message.body).toString()).delta, { text: 'Hi' });
  });
});

describe('Bedrock on its own', () => {
  let fake: BedrockFake;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const SESSION_TOKEN = 'fake-session-token-0123456789';

  before(async () => {
    fake = await startFakeBedrock({ ...FAKE_AWS, sessionToken: SESSION_TOKEN });
    gateway = await startTestGateway({ env: AWS_ENV(fake.server.url, { AWS_SESSION_TOKEN: SESSION_TOKEN }) });
    const key = await gateway.createKey({ scopes: ['model:request'] });
    openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('temporary credentials: the session token is sent and signed; a chat model goes to its geographic inference profile', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Hi.', usage: { promptTokens: 3, completionTokens: 2 } });
    await openai.chat.completions.create({ model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', messages: [{ role: 'user', content: 'Hi' }] });
    const request = fake.server.requests.at(-1)!;
    assert.equal(request.path, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
    assert.equal(signatureProblem(request, { ...FAKE_AWS, sessionToken: SESSION_TOKEN }), null);
    assert.equal(signatureProblem(request, { ...FAKE_AWS, secretAccessKey: 'another-secret', sessionToken: SESSION_TOKEN }), 'SignatureDoesNotMatch', 'the fake checks the signature itself');
  });

  test("Claude on Bedrock speaks the Messages API natively: the caller's body with anthropic_version, no model or stream", async () => {
    const { data, response } = await anthropic.messages
      .create({ model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })
      .withResponse();
    assert.equal(data.content[0]?.type === 'text' ? data.content[0].text : null, 'Hello from Claude on Bedrock.');
    const sent = fake.server.requests.at(-1)!;
    assert.match(sent.path, /\/invoke$/);
    assert.equal(sent.json.anthropic_version, 'bedrock-2023-05-31');
    assert.deepEqual(sent.json.anthropic_beta, ['context-1m-2025-08-07']);
    assert.equal(sent.json.model, undefined);
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.equal(record.usage?.prompt_tokens, 12);

    const stream = anthropic.messages.stream({ model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const final = await stream.finalMessage();
    assert.equal(final.content[0]?.type === 'text' ? final.content[0].text : null, 'Hello from Claude on Bedrock.');
    assert.match(fake.server.requests.at(-1)!.path, /\/invoke-with-response-stream$/);
  });

  test('a Messages API request for a model that is not Claude is translated to Converse', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Nova here.', usage: { promptTokens: 4, completionTokens: 3 } });
    const message = await anthropic.messages.create({ model: 'bedrock/amazon.nova-lite-v1:0', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.content[0]?.type === 'text' ? message.content[0].text : null, 'Nova here.');
    assert.match(fake.server.requests.at(-1)!.path, /^\/model\/us\.amazon\.nova-lite-v1%3A0\/converse$/);
  });

  test('Cohere embeddings: every text at once, the count from the token header', async () => {
    const { data, response } = await openai.embeddings.create({ model: 'bedrock/cohere.embed-english-v3', input: ['alpha', 'beta'], encoding_format: 'float' }).withResponse();
    assert.equal(data.data.length, 2);
    assert.deepEqual(fake.server.requests.at(-1)!.json, { texts: ['alpha', 'beta'], input_type: 'search_document' });
    assert.match(fake.server.requests.at(-1)!.path, /^\/model\/cohere\.embed-english-v3\/invoke$/, 'embeddings take no inference profile');
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.equal(record.usage?.prompt_tokens, 4);
  });

  test('tools and tool results map to toolSpec, toolUse and toolResult', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Sunny.', usage: { promptTokens: 5, completionTokens: 1 } });
    await openai.chat.completions.create({
      model: 'bedrock/amazon.nova-pro-v1:0',
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'required',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'tooluse_1', content: 'sunny' },
      ],
    });
    const body = fake.server.requests.at(-1)!.json;
    assert.deepEqual(body.system, [{ text: 'Be brief.' }]);
    assert.deepEqual(body.toolConfig.toolChoice, { any: {} });
    assert.equal(body.toolConfig.tools[0].toolSpec.name, 'get_weather');
    assert.deepEqual(body.messages[1].content[0].toolUse, { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } });
    assert.deepEqual(body.messages[2].content[0].toolResult, { toolUseId: 'tooluse_1', content: [{ text: 'sunny' }] });
  });

  test("response_format becomes Converse's structured output: the schema as JSON text, JSON mode as any object", async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    fake.scriptChat({ kind: 'reply', text: '{"city":"Paris"}', usage: { promptTokens: 5, completionTokens: 4 } });
    const completion = await openai.chat.completions.create({
      model: 'bedrock/amazon.nova-pro-v1:0',
      response_format: { type: 'json_schema', json_schema: { name: 'place', description: 'A city', schema, strict: true } },
      messages: [{ role: 'user', content: 'Where is the Eiffel tower?' }],
    });
    assert.equal(completion.choices[0]?.message.content, '{"city":"Paris"}');
    const format = fake.server.requests.at(-1)!.json.outputConfig.textFormat;
    assert.equal(format.type, 'json_schema');
    assert.equal(format.structure.jsonSchema.name, 'place');
    assert.equal(format.structure.jsonSchema.description, 'A city');
    assert.deepEqual(JSON.parse(format.structure.jsonSchema.schema), schema, 'Converse takes the schema as a JSON text');

    fake.scriptChat({ kind: 'reply', text: '{}', usage: { promptTokens: 5, completionTokens: 1 } });
    await openai.chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'JSON please' }] });
    assert.deepEqual(JSON.parse(fake.server.requests.at(-1)!.json.outputConfig.textFormat.structure.jsonSchema.schema), { type: 'object' });

    fake.scriptChat({ kind: 'reply', text: 'plain', usage: { promptTokens: 5, completionTokens: 1 } });
    await openai.chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', response_format: { type: 'text' }, messages: [{ role: 'user', content: 'Text please' }] });
    assert.equal(fake.server.requests.at(-1)!.json.outputConfig, undefined);

    await assert.rejects(
      openai.chat.completions.create({ model: 'bedrock/amazon.nova-pro-v1:0', response_format: { type: 'json_schema', json_schema: { name: 'x' } } as never, messages: [{ role: 'user', content: 'x' }] }),
      (error: InstanceType<typeof OpenAI.APIError>) => error.status === 400 && (error.error as { param?: string }).param === 'response_format.json_schema.schema',
    );
  });
});

describe('one routing entry over Anthropic and Bedrock', () => {
  test('a deployment on Bedrock of claude-sonnet-4-5 sends the Bedrock id of the same model, and serves when Anthropic fails', async () => {
    const bedrock = await startFakeBedrock();
    const claude = await startFakeAnthropic();
    const gateway = await startTestGateway({
      env: { ...AWS_ENV(bedrock.server.url), ANTHROPIC_BASE_URL: claude.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY },
      configFile: { routing: [{ model: 'claude-sonnet-4-5', retries: 1, deployments: [{ provider: 'anthropic', weight: 1_000_000 }, { provider: 'bedrock', settings: { inferenceProfile: 'global' } }] }] },
    });
    try {
      claude.reply({ error: 'api_error', message: 'Internal server error' });
      bedrock.scriptChat({ kind: 'reply', text: 'From Bedrock.', usage: { promptTokens: 2, completionTokens: 2 } });
      const openai = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      const { data, response } = await openai.chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.equal(data.choices[0]?.message.content, 'From Bedrock.');
      assert.equal(data.model, 'claude-sonnet-4-5');
      assert.equal(response.headers.get('x-modelgate-attempts'), '2');
      assert.equal(bedrock.server.requests.at(-1)!.path, '/model/global.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
      const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
      assert.deepEqual(
        record.detail.attempts.map((attempt: { deployment: string; outcome: string; upstreamStatus?: number }) => [attempt.deployment, attempt.outcome, attempt.upstreamStatus]),
        [['anthropic', 'provider_error', 500], ['bedrock', 'ok', undefined]],
      );
    } finally {
      await gateway.close();
      await bedrock.close();
      await claude.close();
    }
  });
});

describe("AWS's credential chain", () => {
  /** The chain reads the shared files from the process's environment, as the AWS CLI and SDKs do. */
  async function withSharedFiles<T>(credentials: string, run: () => Promise<T>): Promise<T> {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-aws-'));
    writeFileSync(join(dir, 'credentials'), credentials);
    writeFileSync(join(dir, 'config'), '');
    const saved = { AWS_SHARED_CREDENTIALS_FILE: process.env.AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE: process.env.AWS_CONFIG_FILE };
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'credentials');
    process.env.AWS_CONFIG_FILE = join(dir, 'config');
    try {
      return await run();
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('a profile of the shared credentials file signs the calls; a profile it lacks is a 502, not a 500', async () => {
    const bedrock = await startFakeBedrock();
    const profileFile = `[default]\naws_access_key_id = AKIDNOTTHISONE0000\naws_secret_access_key = not-this-secret\n\n[team]\naws_access_key_id = ${FAKE_AWS.accessKeyId}\naws_secret_access_key = ${FAKE_AWS.secretAccessKey}\n`;
    await withSharedFiles(profileFile, async () => {
      const env = { AWS_REGION: FAKE_AWS.region, BEDROCK_BASE_URL: bedrock.server.url, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };
      const gateway = await startTestGateway({ env: { ...env, AWS_PROFILE: 'team' } });
      const lacking = await startTestGateway({ env: { ...env, AWS_PROFILE: 'nobody' } });
      try {
        assert.match(gateway.gateway.context.providers.summaries().find((provider) => provider.name === 'bedrock')?.description ?? '', /AWS profile team/);
        bedrock.scriptChat({ kind: 'reply', text: 'Signed by the profile.', usage: { promptTokens: 2, completionTokens: 3 } });
        const openai = new OpenAI({ apiKey: await gateway.createKey(), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
        const answer = await openai.chat.completions.create({ model: 'bedrock/amazon.nova-lite-v1:0', messages: [{ role: 'user', content: 'Hi' }] });
        assert.equal(answer.choices[0]?.message.content, 'Signed by the profile.');
        assert.equal(signatureProblem(bedrock.server.requests.at(-1)!, FAKE_AWS), null);

        const refused = await new OpenAI({ apiKey: await lacking.createKey(), baseURL: `${lacking.url}/v1`, maxRetries: 0 }).chat.completions
          .create({ model: 'bedrock/amazon.nova-lite-v1:0', messages: [{ role: 'user', content: 'Hi' }] })
          .then(() => assert.fail('expected a refusal'), (error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
        assert.equal(refused.status, 502);
        assert.equal((refused.error as { code?: string }).code, 'provider_error');
      } finally {
        await gateway.close();
        await lacking.close();
        await bedrock.close();
      }
    });
  });
});
