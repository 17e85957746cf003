import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GatewayError } from '../src/errors/index.js';
import { geminiFormat, geminiModelPage, NativeGeminiStreamEncoder, refuseUntranslatableGemini, type GeminiBody } from '../src/formats/index.js';
import type { ChunkReceived, ContentFrameReceived, JsonObject, TokenUsage } from '../src/model-api/index.js';

/*
 * The Gemini API format's mappers without HTTP: the decoder on a recorded request, the stream
 * encoders on recorded streams (an OpenAI chat stream translated, a Gemini stream passed
 * through), in both framings, and the model list's pages.
 */

const OPTIONS = { transcriptCharacters: 10_000 };

function fixture(path: string): string {
  return readFileSync(new URL(`./fixtures/providers/${path}`, import.meta.url), 'utf8');
}

/** The data of each event of a recorded server-sent event stream. */
function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) => event.replace(/^data: /, '').trim())
    .filter((data) => data.length > 0 && data !== '[DONE]');
}

function decode(body: GeminiBody, stream = false) {
  return geminiFormat.decodeRequest({ model: 'claude-sonnet-4-5', stream, sse: true, body }, undefined);
}

test('a recorded request decodes to the internal call: image, function call and its response by name, tools', () => {
  const body = JSON.parse(fixture('gemini/generate-content-request.json')) as GeminiBody;
  const decoded = decode(body);
  const messages = decoded.body.messages as JsonObject[];
  const user = messages.find((message) => message.role === 'user') as { content: JsonObject[] };
  assert.deepEqual(user.content[1], { type: 'image_url', image_url: { url: `data:image/png;base64,${(body.contents![0]!.parts![1]!.inlineData as { data: string }).data}` } });
  const assistant = messages.find((message) => message.role === 'assistant') as { tool_calls: { id: string; function: { name: string; arguments: string } }[] };
  const call = assistant.tool_calls[0]!;
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { location: 'Boston, MA' });
  const tool = messages.find((message) => message.role === 'tool')!;
  assert.equal(tool.tool_call_id, call.id, 'the response answers the call of its name');
  assert.deepEqual(JSON.parse(tool.content as string), { temperature: 22, unit: 'celsius' });
});

test('generationConfig, thinking, search and tool config map; safetySettings is dropped; cachedContent and code execution are untranslatable', () => {
  const decoded = decode({
    systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
    contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    generationConfig: {
      temperature: 0.3,
      topP: 0.9,
      topK: 20,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      candidateCount: 2,
      responseMimeType: 'application/json',
      responseSchema: { type: 'OBJECT', properties: { answer: { type: 'STRING', nullable: true } }, propertyOrdering: ['answer'] },
      thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      mediaResolution: 'MEDIA_RESOLUTION_LOW',
    },
    tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { x: { type: 'INTEGER' } } } }] }, { googleSearch: {} }, { codeExecution: {} }],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
    safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    cachedContent: 'cachedContents/abc',
  });
  const { body } = decoded;
  assert.deepEqual((body.messages as JsonObject[])[0], { role: 'system', content: 'Be brief.\nAnswer in French.' });
  assert.equal(body.temperature, 0.3);
  assert.equal(body.top_p, 0.9);
  assert.equal(body.max_completion_tokens, 100);
  assert.deepEqual(body.stop, ['END']);
  assert.equal(body.n, 2);
  assert.equal(decoded.choices, 2);
  assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object', properties: { answer: { type: ['string', 'null'] } } } } });
  assert.deepEqual(body.tools, [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: { type: 'integer' } } } } }]);
  assert.deepEqual(body.tool_choice, { type: 'function', function: { name: 'f' } });
  assert.deepEqual(decoded.extensions?.topK, { param: 'generationConfig.topK', value: 20 });
  assert.deepEqual(decoded.extensions?.reasoning, { param: 'generationConfig.thinkingConfig', effort: null, budgetTokens: 2048, includeThoughts: true });
  assert.equal(decoded.extensions?.webSearch?.param, 'tools[1].googleSearch');
  assert.deepEqual(decoded.dropped.sort(), ['generationConfig.mediaResolution', 'safetySettings']);
  assert.deepEqual(decoded.untranslatable.map((field) => field.param).sort(), ['cachedContent', 'tools[2].codeExecution']);
  assert.throws(() => refuseUntranslatableGemini(decoded), (error: unknown) => error instanceof GatewayError && error.code === 'unsupported_field' && error.param === 'cachedContent');
});

test('a file by reference is refused for every model; a function response that answers nothing is a 400 naming it', () => {
  assert.throws(
    () => decode({ contents: [{ parts: [{ fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mimeType: 'application/pdf' } }] }] }),
    (error: unknown) => error instanceof GatewayError && error.status === 400 && error.param === 'contents[0].parts[0].fileData',
  );
  assert.throws(
    () => decode({ contents: [{ parts: [{ functionResponse: { name: 'f', response: {} } }] }] }),
    (error: unknown) => error instanceof GatewayError && error.param === 'contents[0].parts[0].functionResponse',
  );
});

function chunkEvents(text: string): { chunks: ChunkReceived[]; usage: TokenUsage } {
  const values = sseData(text).map((data) => JSON.parse(data) as JsonObject);
  const last = values.find((value) => value.usage !== null && value.usage !== undefined)!.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  return {
    chunks: values.filter((value) => Array.isArray(value.choices) && value.choices.length > 0).map((chunk) => ({ type: 'chunk-received', chunk })),
    usage: { promptTokens: last.prompt_tokens, completionTokens: last.completion_tokens, totalTokens: last.total_tokens, cachedPromptTokens: 0 },
  };
}

test("a recorded OpenAI stream as streamGenerateContent's events: the text, then the finish reason and the whole usage in the last response", () => {
  const { chunks, usage } = chunkEvents(fixture('openai/stream-chat-completion.sse'));
  const decoded = decode({ contents: [{ parts: [{ text: 'Hi' }] }] }, true);
  const encoder = geminiFormat.streamEncoder(decoded, OPTIONS);
  const frames = chunks.map((chunk) => encoder.encode(chunk)).join('') + encoder.usage({ type: 'usage-reported', usage }) + (encoder.end(usage) as string);
  const responses = sseData(frames).map((data) => JSON.parse(data) as { candidates: { content: { parts: { text?: string }[] }; finishReason?: string }[]; usageMetadata?: JsonObject; modelVersion: string; responseId: string });
  assert.equal(responses.map((response) => response.candidates[0]!.content.parts.map((part) => part.text ?? '').join('')).join(''), 'Hello');
  const last = responses.at(-1)!;
  assert.equal(last.candidates[0]!.finishReason, 'STOP');
  assert.deepEqual(last.usageMetadata, { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 });
  assert.equal(last.modelVersion, 'claude-sonnet-4-5');
  assert.equal(last.responseId, 'chatcmpl-123');
  assert.ok(responses.slice(0, -1).every((response) => response.candidates[0]!.finishReason === undefined), 'only the last has a finish reason');
});

test('a streamed tool call goes out whole, with its id, in the last response; without alt=sse the stream is one JSON array', () => {
  const decoded = { ...decode({ contents: [{ parts: [{ text: 'Weather?' }] }] }, true), sse: false };
  const encoder = geminiFormat.streamEncoder(decoded, OPTIONS);
  assert.equal(encoder.contentType, 'application/json; charset=utf-8');
  const delta = (value: JsonObject, finish: string | null = null): ChunkReceived => ({ type: 'chunk-received', chunk: { id: 'c1', choices: [{ index: 0, delta: value, finish_reason: finish }] } });
  const frames = [
    delta({ content: 'Let me check.' }),
    delta({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"ci' } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
    delta({}, 'tool_calls'),
  ]
    .map((event) => encoder.encode(event))
    .join('');
  const array = JSON.parse(frames + (encoder.end(null) as string)) as { candidates: { content: { parts: JsonObject[] }; finishReason?: string }[] }[];
  const parts = array.flatMap((response) => response.candidates[0]!.content.parts);
  assert.deepEqual(parts, [{ text: 'Let me check.' }, { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } } }]);
  assert.equal(array.at(-1)!.candidates[0]!.finishReason, 'STOP');
  const failed = geminiFormat.streamEncoder(decoded, OPTIONS);
  const body = JSON.parse(failed.encode(delta({ content: 'Hi' })) + failed.fail(new GatewayError('provider_error', 'The provider failed.'), 'req_1')) as JsonObject[];
  assert.deepEqual((body[0] as { candidates: { content: { parts: JsonObject[] } }[] }).candidates[0]!.content.parts, [{ text: 'Hi' }], 'what came before the failure is sent');
  assert.deepEqual((body.at(-1) as { error: JsonObject }).error.status, 'UNAVAILABLE');
});

test('a recorded Gemini stream passes through as sent, framed as asked, and the transcript keeps its text', () => {
  const data = sseData(fixture('gemini/stream-generate-content.sse'));
  const events: ContentFrameReceived[] = data.map((text) => ({ type: 'content-frame-received', data: text, value: JSON.parse(text) as JsonObject }));
  const sse = new NativeGeminiStreamEncoder('gemini-2.5-flash', true, OPTIONS);
  assert.deepEqual(sseData(events.map((event) => sse.encode(event)).join('') + sse.end(null)), data);
  assert.equal(sse.transcript(null, true).text, 'The sky is blue.');
  const array = new NativeGeminiStreamEncoder('gemini-2.5-flash', false, OPTIONS);
  assert.deepEqual(JSON.parse(events.map((event) => array.encode(event)).join('') + array.end(null)), events.map((event) => event.value));
  const renamed = new NativeGeminiStreamEncoder('fast', true, OPTIONS);
  const shown = sseData(renamed.encode(events[0]!)).map((text) => JSON.parse(text) as JsonObject)[0]!;
  assert.deepEqual(shown, { ...events[0]!.value, modelVersion: 'fast' }, "only modelVersion changes: it shows the caller's model");
});

test("the model list pages in Google's shape, every model with the methods of its mode", () => {
  const entries = [
    { id: 'a', mode: 'chat', description: 'A', context_window: 1000, max_output_tokens: 100 },
    { id: 'b', mode: 'image_generation', description: 'B', context_window: null, max_output_tokens: null },
    { id: 'c', mode: 'embedding', description: 'C', context_window: 2048, max_output_tokens: null },
    { id: 'd', mode: 'chat', description: 'D', context_window: null, max_output_tokens: null },
  ];
  const first = geminiModelPage(entries, { pageSize: '2' }) as { models: { name: string; supportedGenerationMethods: string[] }[]; nextPageToken?: string };
  assert.deepEqual(first.models.map((model) => model.name), ['models/a', 'models/b']);
  assert.deepEqual(first.models[0]!.supportedGenerationMethods, ['generateContent', 'streamGenerateContent', 'countTokens']);
  assert.deepEqual(first.models[1]!.supportedGenerationMethods, [], 'an image model serves none of these paths');
  const second = geminiModelPage(entries, { pageSize: '2', pageToken: first.nextPageToken! }) as { models: { name: string; supportedGenerationMethods: string[] }[]; nextPageToken?: string };
  assert.deepEqual(second.models.map((model) => model.name), ['models/c', 'models/d']);
  assert.deepEqual(second.models[0]!.supportedGenerationMethods, ['embedContent', 'batchEmbedContents']);
  assert.equal(second.nextPageToken, undefined);
  assert.throws(() => geminiModelPage(entries, { pageToken: 'not-a-token' }), (error: unknown) => error instanceof GatewayError && error.param === 'pageToken');
});
