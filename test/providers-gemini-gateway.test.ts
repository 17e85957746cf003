import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  blockedPromptResponse,
  candidateResponse,
  contentlessCandidateResponse,
  FAKE_GEMINI_KEY,
  GENERATED_PNG_BASE64,
  startFakeGemini,
  textFrames,
  textResponse,
  type FakeGemini,
} from './fakes/gemini.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startGeminiConformanceFake } from './fakes/gemini-conformance.js';
import {
  errorTextWithoutId,
  openaiClient,
  rejectsWith,
  runProviderConformance,
} from './providers/conformance.js';

/*
 * Gemini models through a real gateway, driven by the official openai SDK: the shared
 * conformance suite, then what is Gemini's own (tools, safety blocks, embeddings, Imagen).
 */

const MODEL = 'gemini-2.5-flash';
const USAGE = { promptTokens: 11, completionTokens: 7 };

const gatewaySetup = (fakeUrl: string) => ({ env: { GEMINI_BASE_URL: fakeUrl, GEMINI_API_KEY: FAKE_GEMINI_KEY } });

runProviderConformance({
  name: 'gemini',
  startFake: startGeminiConformanceFake,
  gateway: gatewaySetup,
  chatModel: MODEL,
  upstreamKey: FAKE_GEMINI_KEY,
  acceptsRemoteImageUrls: false,
  notFoundMessage: `models/${MODEL} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
  providerRequestId: /^[\w-]{22}$/,
  providerRequestIdOnError: false,
  takesClientRequestId: false,
  capabilityModels: { embeddings: 'gemini-embedding-001', images: 'imagen-4.0-generate-001' },
  skip: {
    speech: 'the Gemini API has no text-to-speech endpoint the adapter maps (its audio output is a chat modality)',
    transcription: 'the Gemini API has no transcription endpoint; audio is a chat input part',
  },
});

describe('Gemini models through the gateway (openai SDK)', () => {
  let fake: FakeGemini;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    fake = await startFakeGemini();
    gateway = await startTestGateway(gatewaySetup(fake.url));
    client = openaiClient(gateway.url, await gateway.createKey({ scopes: ['model:request'] }));
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });
  beforeEach(() => fake.resetReplies());

  test('a service alias reaches Gemini under the upstream model id; the answer shows the alias', async () => {
    fake.reply('generateContent', { response: textResponse('Hi!', { usage: USAGE }) });
    const completion = await client.chat.completions.create({ model: 'service-3', messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(completion.model, 'service-3');
    assert.equal(completion.choices[0]?.message.content, 'Hi!');
    assert.equal(fake.last('generateContent')!.path, `/v1beta/models/${MODEL}:generateContent`);
  });

  test('tool calls round-trip through the SDK, streamed and not', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    ];
    fake.reply('chat', { response: candidateResponse([{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }], { usage: USAGE }) });
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools });
    const message = completion.choices[0]!.message;
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    const call = message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Oslo' });

    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools, stream: true });
    const streamedCalls: unknown[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      streamedCalls.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    assert.equal((streamedCalls[0] as { function: { name: string } }).function.name, 'get_weather');

    fake.reply('chat', { response: textResponse('It is 4 degrees.', { usage: USAGE }) });
    const answer = await client.chat.completions.create({
      model: MODEL,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        message,
        { role: 'tool', tool_call_id: call.id, content: '{"celsius":4}' },
      ],
    });
    assert.equal(answer.choices[0]?.message.content, 'It is 4 degrees.');
    assert.deepEqual(fake.last('generateContent')!.json.contents.at(-1), {
      role: 'user',
      parts: [{ functionResponse: { name: 'get_weather', response: { celsius: 4 } } }],
    });
  });

  test('usage with thinking and cached tokens reads the same streamed (include_usage) as not', async () => {
    const usage = { promptTokens: 5, completionTokens: 3, thoughtsTokens: 20, cachedTokens: 2 };
    fake.reply('chat', { frames: textFrames(['Hel', 'lo'], usage) });
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] });
    const expected = {
      prompt_tokens: 5,
      completion_tokens: 23,
      total_tokens: 28,
      prompt_tokens_details: { cached_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 20 },
    };
    assert.deepEqual(completion.usage, expected);
    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
    let streamed: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) streamed = chunk.usage ?? streamed;
    assert.deepEqual(streamed, expected);
  });

  test('tool and response schemas with integer, boolean or null enum values reach Gemini in a shape it accepts', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'set_priority',
          parameters: {
            type: 'object',
            properties: {
              level: { type: 'integer', enum: [0, 2, 4], description: 'Priority level' },
              urgent: { const: true },
              colour: { type: ['string', 'null'], enum: ['red', 'green', null] },
            },
            required: ['level'],
          },
        },
      },
    ];
    fake.reply('chat', { response: candidateResponse([{ functionCall: { name: 'set_priority', args: { level: 2 } } }], { usage: USAGE }) });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Make it urgent.' }],
      tools,
      response_format: { type: 'json_schema', json_schema: { name: 'pick', schema: { type: 'object', properties: { n: { type: 'number', enum: [1.5, 2.5] } } } } },
    });
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
    const body = fake.last('generateContent')!.json;
    const properties = body.tools[0].functionDeclarations[0].parameters.properties;
    assert.deepEqual(properties.level, { type: 'INTEGER', description: 'Priority level (one of: 0, 2, 4)' });
    assert.deepEqual(properties.urgent, { type: 'BOOLEAN', description: 'Always true.' });
    assert.deepEqual(properties.colour, { type: 'STRING', enum: ['red', 'green'], nullable: true });
    assert.deepEqual(body.generationConfig.responseSchema.properties.n, { type: 'NUMBER', description: 'One of: 1.5, 2.5.' });
  });

  test('a safety-blocked prompt is a 200 with finish_reason content_filter and empty content', async () => {
    fake.reply('chat', { response: blockedPromptResponse() });
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Something unsafe' }] });
    assert.equal(completion.choices[0]?.finish_reason, 'content_filter');
    assert.equal(completion.choices[0]?.message.content, '');
  });

  test('a malformed function call is a 502 the SDK raises (streamed: the error chunk), never an empty "stop" answer', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'save_report', parameters: { type: 'object', properties: { body: { type: 'string' } } } } }];
    const request = { model: MODEL, messages: [{ role: 'user' as const, content: 'Save the report.' }], tools };
    fake.reply('chat', { response: contentlessCandidateResponse('MALFORMED_FUNCTION_CALL') });
    const error = await rejectsWith(client.chat.completions.create(request), 502, 'provider_error');
    assert.match(error.message, /malformed tool call.*Retry the request/);

    const id = 'resp-mfc-stream';
    fake.reply('chat', {
      frames: [textResponse('Saving it now.', { finishReason: null, usage: USAGE, id }), { ...contentlessCandidateResponse('MALFORMED_FUNCTION_CALL'), responseId: id }],
    });
    const stream = await client.chat.completions.create({ ...request, stream: true });
    const finishes: (string | null)[] = [];
    await assert.rejects(
      async () => {
        for await (const chunk of stream) finishes.push(chunk.choices[0]?.finish_reason ?? null);
      },
      (raised: unknown) => raised instanceof OpenAI.APIError && raised.code === 'provider_error' && /malformed tool call/.test(raised.message),
    );
    assert.deepEqual(finishes, [null], 'the text chunk came, no finish_reason did');
  });

  test('a candidate that stopped with nothing (finishReason OTHER) is a 502, not an empty answer', async () => {
    fake.reply('chat', { response: contentlessCandidateResponse('OTHER') });
    const error = await rejectsWith(client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }), 502, 'provider_error');
    assert.match(error.message, /without an answer/);
  });

  test('presence_penalty on a model that refuses penalties → 400 invalid_body naming it and saying to remove it', async () => {
    const error = await rejectsWith(
      client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], presence_penalty: 0.6 }),
      400,
      'invalid_body',
    );
    assert.equal(error.param, 'presence_penalty');
    assert.match(error.message, /does not support presence_penalty: remove it/);
  });

  test('a file-URI reference is a clear 400 and never reaches Gemini', async () => {
    const before = fake.requests.length;
    const error = await rejectsWith(
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Read' }, { type: 'file', file: { file_data: 'gs://bucket/report.pdf', filename: 'report.pdf' } }] }],
      }),
      400,
      'invalid_body',
    );
    assert.match(error.message, /base64/);
    assert.equal(fake.requests.length, before);
  });

  test('upstream 403 and a rejected API key → provider-neutral 502', async () => {
    fake.reply('generateContent', { error: 403, message: 'Permission denied on resource project 12345.' });
    const denied = await rejectsWith(client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }), 502, 'provider_error');
    assert.ok(!errorTextWithoutId(denied).includes('12345'));

    const wrongKeyGateway = await startTestGateway({ env: { GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: 'AIzaSyWrongKey' } });
    try {
      const wrongKeyClient = openaiClient(wrongKeyGateway.url, await wrongKeyGateway.createKey({ scopes: ['model:request'] }));
      const rejected = await rejectsWith(wrongKeyClient.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }), 502, 'provider_error');
      assert.ok(!JSON.stringify(rejected.error).includes('API key not valid'));
    } finally {
      await wrongKeyGateway.close();
    }
  });

  test('embeddings: the SDK (base64 by default) gets Gemini\'s vectors', async () => {
    const result = await client.embeddings.create({ model: 'gemini-embedding-001', input: ['alpha', 'beta'], dimensions: 3 });
    assert.equal(result.object, 'list');
    assert.equal(result.model, 'gemini-embedding-001');
    assert.equal(result.data.length, 2);
    const values = fake.last('batchEmbedContents')!.json.requests.map((item: { content: { parts: { text: string }[] } }) => item.content.parts[0]!.text);
    assert.deepEqual(values, ['alpha', 'beta']);
    assert.equal(result.data[1]!.embedding.length, 3);
    assert.ok(Math.abs(result.data[1]!.embedding[1]! - 0.021) < 1e-6);
  });

  test('images: Imagen predictions come back as b64_json', async () => {
    const result = await client.images.generate({ model: 'imagen-4.0-generate-001', prompt: 'A lighthouse at dusk', n: 1, size: '1024x1024' });
    assert.equal(result.data?.[0]?.b64_json, GENERATED_PNG_BASE64);
    assert.deepEqual(fake.last('predict')!.json.parameters, { sampleCount: 1, aspectRatio: '1:1' });
  });
});
