import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../src/errors/index.js';
import { createGeminiProvider } from '../src/providers/gemini/index.js';
import { createUpstreamDispatcher } from '../src/providers/shared/upstream-http.js';
import type { ChatCall, ChatStreamEvent, JsonObject, Provider } from '../src/model-api/index.js';
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
import { PDF_BASE64, PNG_BASE64 } from './providers/conformance.js';
import { eventsOf, readChatStream } from './helpers/chat-streams.js';
import { VERDICT_RESPONSE_FORMAT } from '../src/vetting/index.js';

/*
 * The Gemini adapter called directly against the fake Gemini API: what it sends (asserted on
 * what the fake received) and how it maps what comes back to the OpenAI shapes.
 */

const MODEL = 'gemini-2.5-flash';
const USAGE = { promptTokens: 11, completionTokens: 7 };

function chatCall(body: JsonObject, signal = new AbortController().signal): ChatCall {
  return { signal, requestId: 'req_test', upstreamModel: MODEL, body };
}

const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });

async function collect(provider: Provider, body: JsonObject): Promise<ChatStreamEvent[]> {
  return eventsOf(await provider.chat!.stream(chatCall(body)));
}

const chunksOf = (events: ChatStreamEvent[]) =>
  events.flatMap((event) => (event.type === 'chunk-received' ? [event.chunk as { choices: { index: number; delta: JsonObject; finish_reason: string | null }[] }] : []));

async function rejectsWithCode(call: Promise<unknown>, code: string): Promise<GatewayError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected ${code}, the call succeeded`);
}

describe('Gemini adapter', () => {
  let fake: FakeGemini;
  let provider: Provider;
  const dispatcher = createUpstreamDispatcher({ connectionsPerOrigin: 8, timeoutMs: 1_000, streamIdleTimeoutMs: 1_000 });
  const http = { dispatcher, timeoutMs: 1_000, streamIdleTimeoutMs: 1_000 };

  before(async () => {
    fake = await startFakeGemini();
    provider = createGeminiProvider({ name: 'gemini', baseUrl: `${fake.url}/`, apiKey: FAKE_GEMINI_KEY, http });
  });
  after(async () => {
    await fake.close();
    await dispatcher.close();
  });
  beforeEach(() => fake.resetReplies());

  describe('chat request mapping', () => {
    test('system → systemInstruction, user/assistant → user/model, sampling fields → generationConfig; the key goes in x-goog-api-key', async () => {
      fake.reply('generateContent', { response: textResponse('Fine.', { usage: USAGE }) });
      await provider.chat!.complete(
        chatCall({
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hello.' },
            { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
          ],
          temperature: 0.2,
          top_p: 0.9,
          max_tokens: 100,
          stop: 'END',
          n: 2,
          seed: 42,
          user: 'someone',
        }),
      );
      const request = fake.last('generateContent')!;
      assert.equal(request.path, `/v1beta/models/${MODEL}:generateContent`);
      assert.equal(request.headers['x-goog-api-key'], FAKE_GEMINI_KEY);
      assert.ok(!request.path.includes('key='));
      assert.deepEqual(request.json, {
        contents: [
          { role: 'user', parts: [{ text: 'Hi' }] },
          { role: 'model', parts: [{ text: 'Hello.' }] },
          { role: 'user', parts: [{ text: 'How are you?' }] },
        ],
        systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in English.' }] },
        generationConfig: { temperature: 0.2, topP: 0.9, maxOutputTokens: 100, candidateCount: 2, seed: 42, stopSequences: ['END'] },
      });
    });

    test('response_format json_schema → responseMimeType + an OpenAPI-subset responseSchema', async () => {
      fake.reply('generateContent', { response: textResponse('{"passed":true}', { usage: USAGE }) });
      await provider.chat!.complete(
        chatCall({
          ...ask('Judge'),
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: 'vetting_verdict',
              strict: true,
              schema: {
                $schema: 'http://json-schema.org/draft-07/schema#',
                type: 'object',
                additionalProperties: false,
                properties: {
                  passed: { type: 'boolean' },
                  reason: { type: ['string', 'null'], description: 'why' },
                  tags: { type: 'array', items: { $ref: '#/$defs/tag' } },
                  level: { anyOf: [{ type: 'integer', format: 'int32' }, { type: 'null' }] },
                  at: { type: 'string', format: 'uri' },
                },
                required: ['passed', 'reason'],
                $defs: { tag: { type: 'string', enum: ['a', 'b'] } },
              },
            },
          },
        }),
      );
      const config = fake.last('generateContent')!.json.generationConfig;
      assert.equal(config.responseMimeType, 'application/json');
      assert.deepEqual(config.responseSchema, {
        type: 'OBJECT',
        properties: {
          passed: { type: 'BOOLEAN' },
          reason: { type: 'STRING', description: 'why', nullable: true },
          tags: { type: 'ARRAY', items: { type: 'STRING', enum: ['a', 'b'] } },
          level: { type: 'INTEGER', format: 'int32', nullable: true },
          at: { type: 'STRING' },
        },
        required: ['passed', 'reason'],
      });
    });

    test('VETTING\'s verdict format is a responseSchema Gemini accepts', async () => {
      fake.reply('generateContent', { response: textResponse('{"passed":true,"reason":"ok","requires_attention":false}', { usage: USAGE }) });
      const { completion } = await provider.chat!.complete(chatCall({ ...ask('Verify'), response_format: VERDICT_RESPONSE_FORMAT }));
      assert.equal((completion.choices as { message: { content: string } }[])[0]!.message.content, '{"passed":true,"reason":"ok","requires_attention":false}');
      const config = fake.last('generateContent')!.json.generationConfig;
      assert.equal(config.responseMimeType, 'application/json');
      assert.equal(config.responseSchema.type, 'OBJECT');
      assert.deepEqual(Object.keys(config.responseSchema.properties).sort(), ['passed', 'reason', 'requires_attention']);
    });

    test('response_format json_object → responseMimeType only; a recursive schema is a 400', async () => {
      fake.reply('generateContent', { response: textResponse('{}', { usage: USAGE }) });
      await provider.chat!.complete(chatCall({ ...ask('JSON please'), response_format: { type: 'json_object' } }));
      assert.deepEqual(fake.last('generateContent')!.json.generationConfig, { responseMimeType: 'application/json' });

      const before = fake.requests.length;
      const recursive = { type: 'object', properties: { child: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } } };
      const error = await rejectsWithCode(
        provider.chat!.complete(chatCall({ ...ask('x'), response_format: { type: 'json_schema', json_schema: { name: 'n', schema: recursive } } })),
        'invalid_body',
      );
      assert.match(error.message, /recursive/);
      assert.equal(fake.requests.length, before);
    });
  });

  describe('multimodal content', () => {
    test('a data-URI image and a PDF file part become inlineData', async () => {
      fake.reply('generateContent', { response: textResponse('A pixel and a PDF.', { usage: USAGE }) });
      await provider.chat!.complete(
        chatCall({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What are these?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'high' } },
                { type: 'file', file: { filename: 'doc.pdf', file_data: `data:application/pdf;base64,${PDF_BASE64}` } },
                { type: 'input_file', filename: 'raw.pdf', file_data: PDF_BASE64 },
              ],
            },
          ],
        }),
      );
      assert.deepEqual(fake.last('generateContent')!.json.contents, [
        {
          role: 'user',
          parts: [
            { text: 'What are these?' },
            { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
            { inlineData: { mimeType: 'application/pdf', data: PDF_BASE64 } },
            { inlineData: { mimeType: 'application/pdf', data: PDF_BASE64 } },
          ],
        },
      ]);
    });

    test('remote image URLs, remote files and file references are refused before any call', async () => {
      const before = fake.requests.length;
      const withPart = (part: JsonObject) => chatCall({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Look' }, part] }] });
      const remote = await rejectsWithCode(provider.chat!.complete(withPart({ type: 'image_url', image_url: { url: 'https://images.example/cat.png' } })), 'invalid_image_url');
      assert.match(remote.message, /base64 data URI/);
      await rejectsWithCode(provider.chat!.complete(withPart({ type: 'file', file: { file_id: 'file-abc123' } })), 'invalid_body');
      const url = await rejectsWithCode(provider.chat!.complete(withPart({ type: 'file', file: { file_data: 'https://files.example/a.pdf' } })), 'invalid_body');
      assert.match(url.message, /remote files are not fetched/);
      await rejectsWithCode(provider.chat!.complete(withPart({ type: 'file', file: { file_data: 'gs://bucket/a.pdf' } })), 'invalid_body');
      await rejectsWithCode(
        provider.chat!.complete(withPart({ type: 'file', file: { file_data: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } })),
        'invalid_body',
      );
      assert.equal(fake.requests.length, before, 'nothing reached the provider');
      assert.equal(provider.acceptsRemoteImageUrls, false);
    });
  });

  describe('tools', () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
      },
      { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
    ];

    test('tools and tool_choice → functionDeclarations and toolConfig', async () => {
      fake.reply('generateContent', { response: textResponse('ok', { usage: USAGE }) });
      await provider.chat!.complete(chatCall({ ...ask('Weather?'), tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }));
      const request = fake.last('generateContent')!.json;
      assert.deepEqual(request.tools, [
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } },
            { name: 'now' },
          ],
        },
      ]);
      assert.deepEqual(request.toolConfig, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });

      await provider.chat!.complete(chatCall({ ...ask('Weather?'), tools, tool_choice: 'none' }));
      assert.deepEqual(fake.last('generateContent')!.json.toolConfig, { functionCallingConfig: { mode: 'NONE' } });
    });

    test('functionCall parts → tool_calls with JSON-string arguments, finish_reason tool_calls; the thought signature round-trips', async () => {
      fake.reply('generateContent', {
        response: candidateResponse(
          [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJlLTE=' },
            { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
          ],
          { usage: USAGE },
        ),
      });
      const { completion } = await provider.chat!.complete(chatCall({ ...ask('Weather in Paris and Rome?'), tools }));
      const choice = (completion.choices as { message: { content: string | null; tool_calls: { id: string; type: string; function: { name: string; arguments: string }; extra_content?: unknown }[] }; finish_reason: string }[])[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      assert.equal(choice.message.content, null);
      assert.equal(choice.message.tool_calls.length, 2);
      const [paris, rome] = choice.message.tool_calls;
      assert.equal(paris!.type, 'function');
      assert.match(paris!.id, /^call_/);
      assert.notEqual(paris!.id, rome!.id);
      assert.deepEqual(paris!.function, { name: 'get_weather', arguments: '{"city":"Paris"}' });
      assert.deepEqual(paris!.extra_content, { google: { thought_signature: 'c2lnbmF0dXJlLTE=' } });
      assert.equal(rome!.extra_content, undefined);

      // The next turn: the assistant's tool calls and both results go back as Gemini parts.
      fake.reply('generateContent', { response: textResponse('Sunny in both.', { usage: USAGE }) });
      await provider.chat!.complete(
        chatCall({
          tools,
          messages: [
            { role: 'user', content: 'Weather in Paris and Rome?' },
            { role: 'assistant', content: null, tool_calls: choice.message.tool_calls },
            { role: 'tool', tool_call_id: paris!.id, content: '{"temp":21}' },
            { role: 'tool', tool_call_id: rome!.id, content: 'sunny' },
          ],
        }),
      );
      assert.deepEqual(fake.last('generateContent')!.json.contents, [
        { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJlLTE=' },
            { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }, { functionResponse: { name: 'get_weather', response: { result: 'sunny' } } }],
        },
      ]);
    });

    test('a tool message without a matching tool call, or arguments that are not JSON, is a 400', async () => {
      await rejectsWithCode(
        provider.chat!.complete(chatCall({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_unknown', content: '1' }] })),
        'invalid_body',
      );
      await rejectsWithCode(
        provider.chat!.complete(
          chatCall({
            messages: [
              { role: 'user', content: 'x' },
              { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{not json' } }] },
            ],
          }),
        ),
        'invalid_body',
      );
    });
  });

  describe('chat response mapping', () => {
    test('text, finish reason STOP → stop, a thought summary as reasoning_content, usage with cached and thinking tokens', async () => {
      fake.reply('generateContent', {
        response: candidateResponse([{ text: 'Thinking…', thought: true }, { text: 'Hello ' }, { text: 'there.' }], {
          usage: { promptTokens: 20, completionTokens: 5, cachedTokens: 16, thoughtsTokens: 30 },
          id: 'resp-123',
        }),
      });
      const { completion, usage } = await provider.chat!.complete(chatCall(ask('Hi')));
      assert.equal(completion.id, 'chatcmpl-resp-123');
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.model, MODEL);
      assert.deepEqual(completion.choices, [
        { index: 0, message: { role: 'assistant', content: 'Hello there.', refusal: null, reasoning_content: 'Thinking…' }, finish_reason: 'stop', logprobs: null },
      ]);
      assert.deepEqual(usage, { promptTokens: 20, completionTokens: 35, totalTokens: 55, cachedPromptTokens: 16 });
      assert.deepEqual(completion.usage, {
        prompt_tokens: 20,
        completion_tokens: 35,
        total_tokens: 55,
        prompt_tokens_details: { cached_tokens: 16 },
        completion_tokens_details: { reasoning_tokens: 30 },
      });
    });

    for (const [reason, expected] of [
      ['MAX_TOKENS', 'length'],
      ['SAFETY', 'content_filter'],
      ['RECITATION', 'content_filter'],
      ['PROHIBITED_CONTENT', 'content_filter'],
      ['SPII', 'content_filter'],
      ['BLOCKLIST', 'content_filter'],
      ['LANGUAGE', 'content_filter'],
      ['IMAGE_SAFETY', 'content_filter'],
      ['IMAGE_PROHIBITED_CONTENT', 'content_filter'],
      ['IMAGE_RECITATION', 'content_filter'],
      ['OTHER', 'stop'],
      ['FINISH_REASON_UNSPECIFIED', 'stop'],
      ['A_REASON_ADDED_LATER', 'stop'],
    ] as const) {
      test(`finishReason ${reason} → ${expected}`, async () => {
        fake.reply('generateContent', { response: candidateResponse(reason === 'SAFETY' ? [] : [{ text: 'Cut' }], { finishReason: reason, usage: USAGE }) });
        const { completion } = await provider.chat!.complete(chatCall(ask('Hi')));
        const choice = (completion.choices as { finish_reason: string; message: { content: string } }[])[0]!;
        assert.equal(choice.finish_reason, expected);
        assert.equal(choice.message.content, reason === 'SAFETY' ? '' : 'Cut');
      });
    }

    for (const reason of ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'MALFORMED_RESPONSE']) {
      test(`finishReason ${reason} → provider_error that says to retry, never an empty "stop"`, async () => {
        fake.reply('generateContent', { response: contentlessCandidateResponse(reason) });
        const error = await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
        assert.equal(error.status, 502);
        assert.match(error.message, /Retry the request/);
        assert.doesNotMatch(error.message, /Gemini|[A-Z]{2,}_[A-Z]/, 'the caller\'s message stays provider-neutral');
        assert.equal(error.logDetail?.finishReason, reason);
      });
    }

    test('a malformed function call after some text is still a failure: the narration is not the answer', async () => {
      fake.reply('generateContent', { response: candidateResponse([{ text: 'Let me look that up.' }], { finishReason: 'MALFORMED_FUNCTION_CALL', usage: USAGE }) });
      const error = await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
      assert.match(error.message, /malformed tool call/);
    });

    for (const reason of ['OTHER', 'FINISH_REASON_UNSPECIFIED', 'NO_IMAGE', 'IMAGE_OTHER', 'A_REASON_ADDED_LATER']) {
      test(`finishReason ${reason} with no content → provider_error, not an empty answer`, async () => {
        fake.reply('generateContent', { response: contentlessCandidateResponse(reason) });
        const error = await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
        assert.match(error.message, /without an answer.*Retry the request/);
        assert.equal(error.logDetail?.finishReason, reason);
      });
    }

    test('finishReason MISSING_THOUGHT_SIGNATURE → 400 invalid_body saying to send assistant tool calls back unchanged', async () => {
      fake.reply('generateContent', { response: contentlessCandidateResponse('MISSING_THOUGHT_SIGNATURE') });
      const error = await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'invalid_body');
      assert.equal(error.status, 400);
      assert.match(error.message, /extra_content\.google\.thought_signature/);
      assert.equal(error.param, 'messages');
    });

    test('a prompt blocked by safety (promptFeedback, no candidates) → empty content, finish_reason content_filter', async () => {
      fake.reply('generateContent', { response: blockedPromptResponse('SAFETY', 9) });
      const { completion, usage } = await provider.chat!.complete(chatCall(ask('Something unsafe')));
      assert.deepEqual(completion.choices, [
        { index: 0, message: { role: 'assistant', content: '', refusal: null }, finish_reason: 'content_filter', logprobs: null },
      ]);
      assert.deepEqual(usage, { promptTokens: 9, completionTokens: 0, totalTokens: 9, cachedPromptTokens: null });
    });

    test('no usageMetadata → usage null, not zero', async () => {
      const response = textResponse('Hi');
      delete response.usageMetadata;
      fake.reply('generateContent', { response });
      const { completion, usage } = await provider.chat!.complete(chatCall(ask('Hi')));
      assert.equal(usage, null);
      assert.equal(completion.usage, undefined);
    });

    test('a 200 body that is not a GenerateContentResponse → provider_error', async () => {
      fake.reply('generateContent', { response: { candidates: 'nope' } });
      await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
    });
  });

  describe('streaming', () => {
    test('alt=sse frames → chunks (role first), finish_reason, latest usage reported', async () => {
      fake.reply('streamGenerateContent', { frames: textFrames(['Hel', 'lo', ' there.'], USAGE) });
      const events = await collect(provider, ask('Hi'));
      const request = fake.last('streamGenerateContent')!;
      assert.equal(request.path, `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
      const chunks = chunksOf(events);
      assert.deepEqual(
        chunks.map((chunk) => chunk.choices[0]),
        [
          { index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null, logprobs: null },
          { index: 0, delta: { content: 'lo' }, finish_reason: null, logprobs: null },
          { index: 0, delta: { content: ' there.' }, finish_reason: 'stop', logprobs: null },
        ],
      );
      for (const chunk of chunks) assert.equal((chunk as unknown as JsonObject).object, 'chat.completion.chunk');
      assert.equal(new Set(chunks.map((chunk) => (chunk as unknown as JsonObject).id)).size, 1, 'one id for the whole stream');
      const usages = events.flatMap((event) => (event.type === 'usage-reported' ? [event.usage] : []));
      assert.deepEqual(usages.at(-1), { promptTokens: 11, completionTokens: 7, totalTokens: 18, cachedPromptTokens: null });
      assert.ok(!events.some((event) => event.type === 'stream-failed'));
    });

    test('usage is reported when a frame\'s counts change, once per change (cached tokens included)', async () => {
      const id = 'resp-usage';
      // Frames before the last carry the prompt's count only (as Gemini sends them), the last the whole.
      const cached = { ...USAGE, cachedTokens: 4 };
      const counts = [USAGE, USAGE, cached, cached, cached];
      fake.reply('streamGenerateContent', {
        frames: counts.map((usage, index) => textResponse(`piece ${index}`, { finishReason: index === counts.length - 1 ? 'STOP' : null, usage, id })),
      });
      const events = await collect(provider, ask('Hi'));
      const usages = events.flatMap((event) => (event.type === 'usage-reported' ? [event.usage] : []));
      assert.deepEqual(usages, [
        { promptTokens: 11, completionTokens: 0, totalTokens: 11, cachedPromptTokens: null },
        { promptTokens: 11, completionTokens: 0, totalTokens: 11, cachedPromptTokens: 4 },
        { promptTokens: 11, completionTokens: 7, totalTokens: 18, cachedPromptTokens: 4 },
      ]);
    });

    test('a streamed function call → tool_calls delta and finish_reason tool_calls', async () => {
      fake.reply('streamGenerateContent', {
        frames: [candidateResponse([{ functionCall: { name: 'now', args: {} } }], { usage: USAGE })],
      });
      const chunks = chunksOf(await collect(provider, ask('Time?')));
      assert.equal(chunks.length, 1);
      const choice = chunks[0]!.choices[0]!;
      assert.equal(choice.finish_reason, 'tool_calls');
      const [call] = choice.delta.tool_calls as { index: number; id: string; function: { name: string; arguments: string } }[];
      assert.equal(call!.index, 0);
      assert.deepEqual(call!.function, { name: 'now', arguments: '{}' });
    });

    test('a blocked prompt in a stream → one content_filter chunk', async () => {
      fake.reply('streamGenerateContent', { frames: [blockedPromptResponse()] });
      const chunks = chunksOf(await collect(provider, ask('Something unsafe')));
      assert.deepEqual(chunks.map((chunk) => chunk.choices[0]), [
        { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'content_filter', logprobs: null },
      ]);
    });

    test('streams one after another reuse one upstream connection (a finished stream goes back to the pool)', async () => {
      // A pool of one connection: a stream that closed its connection would make the next open a new one.
      const single = createUpstreamDispatcher({ connectionsPerOrigin: 1, timeoutMs: 300, streamIdleTimeoutMs: 300 });
      const pooled = createGeminiProvider({ name: 'gemini', baseUrl: `${fake.url}/`, apiKey: FAKE_GEMINI_KEY, http: { ...http, dispatcher: single } });
      try {
        fake.reply('streamGenerateContent', { frames: textFrames(['Hi'], USAGE) });
        const before = fake.requests.length;
        for (let round = 0; round < 3; round += 1) assert.equal((await collect(pooled, ask('Hi'))).at(-1)?.type, 'chunk-received');
        const ports = fake.requests.slice(before).map((request) => request.remotePort);
        assert.equal(ports.length, 3);
        assert.equal(new Set(ports).size, 1, `connections used: ${ports.join(', ')}`);
      } finally {
        await single.close();
      }
    });

    test('a stream cut before finishReason ends with stream-failed', async () => {
      fake.reply('streamGenerateContent', { frames: textFrames(['Partial', ' answer'], USAGE, { finish: false }), end: 'drop' });
      const events = await collect(provider, ask('Hi'));
      assert.equal(chunksOf(events).map((chunk) => chunk.choices[0]!.delta.content).join(''), 'Partial answer');
      assert.equal(events.at(-1)?.type, 'stream-failed');

      fake.reply('streamGenerateContent', { frames: textFrames(['Partial'], USAGE, { finish: false }), end: 'complete' });
      assert.equal((await collect(provider, ask('Hi'))).at(-1)?.type, 'stream-failed', 'a clean end without finishReason is truncation too');
    });

    test('an error frame inside the 200 stream, or a malformed frame, ends with stream-failed', async () => {
      fake.reply('streamGenerateContent', {
        frames: [...textFrames(['Partial'], USAGE, { finish: false }), { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }],
      });
      const failed = (await collect(provider, ask('Hi'))).at(-1);
      assert.equal(failed?.type, 'stream-failed');
      assert.ok(failed?.type === 'stream-failed' && failed.message.length > 0);

      fake.reply('streamGenerateContent', { frames: [...textFrames(['Partial'], USAGE, { finish: false }), { candidates: 7 }] });
      assert.equal((await collect(provider, ask('Hi'))).at(-1)?.type, 'stream-failed');
    });

    test('a malformed function call mid-stream ends with stream-failed (usage so far counted); as the first frame it rejects with 502', async () => {
      const id = 'resp-mfc';
      fake.reply('streamGenerateContent', {
        frames: [
          textResponse('Let me check.', { finishReason: null, usage: USAGE, id }),
          { ...contentlessCandidateResponse('MALFORMED_FUNCTION_CALL', 30), responseId: id },
        ],
      });
      const events = await collect(provider, ask('Hi'));
      const failed = events.at(-1);
      assert.ok(failed?.type === 'stream-failed', `last event: ${JSON.stringify(failed)}`);
      assert.match(failed.message, /malformed tool call.*Retry the request/);
      assert.equal(failed.logDetail?.finishReason, 'MALFORMED_FUNCTION_CALL');
      assert.ok(!chunksOf(events).some((chunk) => chunk.choices[0]!.finish_reason !== null), 'no chunk says the answer finished');
      const usages = events.flatMap((event) => (event.type === 'usage-reported' ? [event.usage] : []));
      assert.equal(usages.at(-1)?.promptTokens, 30, 'the failing frame\'s usage is still counted');

      fake.reply('streamGenerateContent', { frames: [contentlessCandidateResponse('UNEXPECTED_TOOL_CALL')] });
      const error = await rejectsWithCode(provider.chat!.stream(chatCall(ask('Hi'))), 'provider_error');
      assert.match(error.message, /tool the request does not offer/);
    });

    test('a streamed OTHER after text ends the answer with stop; with nothing streamed it fails', async () => {
      const id = 'resp-other';
      fake.reply('streamGenerateContent', {
        frames: [textResponse('Partial', { finishReason: null, usage: USAGE, id }), textResponse(' answer', { finishReason: 'OTHER', usage: USAGE, id })],
      });
      const chunks = chunksOf(await collect(provider, ask('Hi')));
      assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');

      fake.reply('streamGenerateContent', { frames: [contentlessCandidateResponse('OTHER')] });
      await rejectsWithCode(provider.chat!.stream(chatCall(ask('Hi'))), 'provider_error');
    });

    test('failures before the first frame reject stream() with their documented error', async () => {
      fake.reply('streamGenerateContent', { error: 429 });
      const limited = await rejectsWithCode(provider.chat!.stream(chatCall(ask('Hi'))), 'provider_rate_limited');
      assert.equal(limited.retryAfterSeconds, 17, 'RetryInfo.retryDelay becomes Retry-After');

      fake.reply('streamGenerateContent', { frames: [{ error: { code: 500, message: 'Internal error', status: 'INTERNAL' } }] });
      await rejectsWithCode(provider.chat!.stream(chatCall(ask('Hi'))), 'provider_error');

      fake.reply('streamGenerateContent', { frames: [] });
      await rejectsWithCode(provider.chat!.stream(chatCall(ask('Hi'))), 'provider_error');
    });

    test('a stream that goes silent fails after the idle timeout (never a hang)', async () => {
      fake.reply('streamGenerateContent', { frames: textFrames(['Still'], USAGE, { finish: false }), end: 'hang' });
      const events = await collect(provider, ask('Hi'));
      assert.equal(events.at(-1)?.type, 'stream-failed');
    });
  });

  describe('upstream failures', () => {
    test('403 PERMISSION_DENIED → provider-neutral provider_error; the status stays in logDetail', async () => {
      fake.reply('generateContent', { error: 403, message: 'Permission denied: Consumer has been suspended.' });
      const error = await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
      assert.equal(error.status, 502);
      assert.ok(!error.message.includes('403') && !error.message.includes('suspended'));
      assert.equal(error.upstream?.status, 403);
    });

    test('a wrong API key (400 API_KEY_INVALID) is a credential rejection too, not the caller\'s 400', async () => {
      const wrongKey = createGeminiProvider({ name: 'gemini', baseUrl: fake.url, apiKey: 'AIzaWrongKey', http });
      const error = await rejectsWithCode(wrongKey.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
      assert.ok(!error.message.includes('API key'));
      assert.equal(error.upstream?.status, 400);
      assert.equal(error.upstream?.errorType, 'API_KEY_INVALID');
    });

    test('400 FAILED_PRECONDITION (billing or the region of the gateway\'s own account) → provider-neutral provider_error', async () => {
      const message = 'Gemini API free tier is not available in your country. Please enable billing on your project in Google AI Studio.';
      fake.reply('chat', { error: 400, status: 'FAILED_PRECONDITION', message });
      for (const attempt of [() => provider.chat!.complete(chatCall(ask('Hi'))), () => provider.chat!.stream(chatCall(ask('Hi')))]) {
        const error = await rejectsWithCode(attempt(), 'provider_error');
        assert.equal(error.status, 502);
        assert.doesNotMatch(error.message, /billing|country|Gemini/i);
        assert.equal(error.upstream?.status, 400);
        assert.equal(error.upstream?.message, message);
      }
    });

    test('penalties the model refuses → 400 invalid_body naming the caller\'s field and saying to remove it, streamed or not', async () => {
      for (const [fields, named] of [
        [{ presence_penalty: 0.5 }, /presence_penalty/],
        [{ frequency_penalty: -0.2 }, /frequency_penalty/],
        [{ presence_penalty: 0.1, frequency_penalty: 0.1 }, /presence_penalty and frequency_penalty/],
      ] as const) {
        for (const attempt of [() => provider.chat!.complete(chatCall({ ...ask('Hi'), ...fields })), () => provider.chat!.stream(chatCall({ ...ask('Hi'), ...fields }))]) {
          const error = await rejectsWithCode(attempt(), 'invalid_body');
          assert.equal(error.status, 400);
          assert.match(error.message, named);
          assert.match(error.message, /[Rr]emove/);
          assert.equal(error.param, Object.keys(fields)[0]);
          assert.match(String(error.upstream?.message), /Penalty is not enabled/);
        }
      }
      fake.reply('generateContent', { response: textResponse('Fine.', { usage: USAGE }) });
      await provider.chat!.complete(chatCall({ ...ask('Hi'), presence_penalty: 0, frequency_penalty: 0 }));
    });

    test('400 INVALID_ARGUMENT → invalid_body with Gemini\'s message; 500 → provider_error', async () => {
      fake.reply('generateContent', { error: 400, message: '* GenerateContentRequest.generation_config.max_output_tokens: must be positive\n' });
      const error = await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'invalid_body');
      assert.match(error.message, /max_output_tokens: must be positive/);
      fake.reply('generateContent', { error: 500 });
      await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_error');
    });

    test('no response headers in time → provider_timeout', async () => {
      fake.reply('generateContent', { delayMs: 3000 });
      await rejectsWithCode(provider.chat!.complete(chatCall(ask('Hi'))), 'provider_timeout');
    });

    test('an aborted call stops the upstream request', async () => {
      let closed!: () => void;
      const upstreamClosed = new Promise<void>((resolve) => (closed = resolve));
      fake.reply('streamGenerateContent', { frames: textFrames(['Thinking'], USAGE, { finish: false }), end: 'hang', onClose: () => closed() });
      const controller = new AbortController();
      const reading = readChatStream(await provider.chat!.stream(chatCall(ask('Think'), controller.signal)));
      assert.ok(reading.events.length > 0, 'the first events come with the stream');
      controller.abort();
      await upstreamClosed;
      assert.equal((await reading.ended).at(-1)?.type, 'stream-failed');
    });
  });

  describe('embeddings', () => {
    test('input array → batchEmbedContents requests; the OpenAI list shape back; usage not reported', async () => {
      const result = await provider.embeddings!.embed({
        signal: new AbortController().signal,
        requestId: 'req_test',
        upstreamModel: 'gemini-embedding-001',
        body: { input: ['first', 'second'], dimensions: 4, encoding_format: 'float' },
      });
      const request = fake.last('batchEmbedContents')!;
      assert.equal(request.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
      assert.deepEqual(request.json, {
        requests: [
          { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first' }] }, outputDimensionality: 4 },
          { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second' }] }, outputDimensionality: 4 },
        ],
      });
      assert.equal(result.response.object, 'list');
      assert.equal(result.response.model, 'gemini-embedding-001');
      const data = result.response.data as { object: string; index: number; embedding: number[] }[];
      assert.deepEqual(data.map((item) => [item.object, item.index, item.embedding.length]), [['embedding', 0, 4], ['embedding', 1, 4]]);
      assert.deepEqual(result.vectors, { count: 2, dimensions: 4 });
      assert.equal(result.usage, null);
    });

    test('encoding_format base64 → little-endian float32 bytes; token arrays are a 400', async () => {
      const call = { signal: new AbortController().signal, requestId: 'req_test', upstreamModel: 'gemini-embedding-001' };
      const result = await provider.embeddings!.embed({ ...call, body: { input: 'one', encoding_format: 'base64' } });
      const encoded = (result.response.data as { embedding: string }[])[0]!.embedding;
      const bytes = Buffer.from(encoded, 'base64');
      const floats = Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
      assert.equal(floats.length, 8);
      assert.ok(Math.abs(floats[1]! - 0.011) < 1e-6);
      assert.deepEqual(result.vectors, { count: 1, dimensions: null });
      await rejectsWithCode(provider.embeddings!.embed({ ...call, body: { input: [[1, 2, 3]] } }), 'invalid_body');
    });
  });

  describe('images (Imagen predict)', () => {
    const imageCall = (body: JsonObject) => ({ signal: new AbortController().signal, requestId: 'req_test', upstreamModel: 'imagen-4.0-generate-001', body });

    test('prompt, n and size → instances and parameters; predictions → b64_json', async () => {
      const result = await provider.images!.generate(imageCall({ prompt: 'A red bicycle', n: 2, size: '1792x1024' }));
      const request = fake.last('predict')!;
      assert.equal(request.path, '/v1beta/models/imagen-4.0-generate-001:predict');
      assert.deepEqual(request.json, { instances: [{ prompt: 'A red bicycle' }], parameters: { sampleCount: 2, aspectRatio: '16:9' } });
      assert.equal(result.imageCount, 2);
      assert.deepEqual(result.response.data, [{ b64_json: GENERATED_PNG_BASE64 }, { b64_json: GENERATED_PNG_BASE64 }]);
      assert.equal(result.usage, null);
    });

    test('all images filtered → 400 that says so; response_format url → 400', async () => {
      fake.reply('predict', { response: {} });
      const error = await rejectsWithCode(provider.images!.generate(imageCall({ prompt: 'Something' })), 'invalid_body');
      assert.match(error.message, /safety filters/);
      await rejectsWithCode(provider.images!.generate(imageCall({ prompt: 'x', response_format: 'url' })), 'invalid_body');
    });
  });
});
