import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { upstreamError as anthropicFailure } from '../src/providers/anthropic/errors.js';
import { hintsDroppedOf, toAnthropicRequest } from '../src/providers/anthropic/request-mapping.js';
import { toChatCompletion as anthropicCompletion } from '../src/providers/anthropic/response-mapping.js';
import { AnthropicChatFrames } from '../src/providers/anthropic/stream-mapping.js';
import { parseResponse } from '../src/providers/anthropic/wire.js';
import { toEmbeddingResult } from '../src/providers/gemini/embeddings.js';
import { failureOfErrorBody as geminiFailure } from '../src/providers/gemini/errors.js';
import { toImageResult } from '../src/providers/gemini/images.js';
import { searchDropped, toGenerateContentRequest } from '../src/providers/gemini/request-mapping.js';
import { toChatCompletion as geminiCompletion } from '../src/providers/gemini/response-mapping.js';
import { GeminiStreamMapper } from '../src/providers/gemini/stream-mapping.js';
import { checkBatchEmbedContentsResponse, checkGenerateContentResponse, checkPredictResponse } from '../src/providers/gemini/wire.js';
import { ChatCompletionChunks } from '../src/providers/openai/chat.js';
import { openAIFailure } from '../src/providers/openai/client.js';
import { openAIFileParts } from '../src/providers/openai/file-parts.js';
import { countPromptTokens } from '../src/providers/openai/prompt-tokens.js';
import { encodeChat } from 'gpt-tokenizer/encoding/o200k_base';
import { usageFromWire } from '../src/providers/openai/wire.js';
import type { ChatFrames } from '../src/providers/shared/sse-stream.js';
import type { ChatStreamEvent, JsonObject } from '../src/model-api/index.js';

/*
 * Each adapter's request, response and stream mapping as pure functions over recorded vendor
 * bodies (test/fixtures/providers/<vendor>/, in the shapes of the vendors' API references):
 * no HTTP, no gateway, so a mapping change shows here as the exact field that moved.
 */

const FIXTURES = new URL('./fixtures/providers/', import.meta.url);
const text = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const json = (name: string): JsonObject => JSON.parse(text(name)) as JsonObject;

/** The server-sent events of a recorded stream, as the shared reader hands them to an adapter. */
function sseEvents(name: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (event) => events.push(event) }).feed(text(name));
  return events;
}

/** Runs an adapter's frames over a recorded stream: the events, and after which event the stream said it was complete. */
function readStream(frames: ChatFrames, name: string): { events: ChatStreamEvent[]; endedAt: number[] } {
  const events: ChatStreamEvent[] = [];
  const endedAt: number[] = [];
  sseEvents(name).forEach((event, index) => {
    if (frames.read(event, events)) endedAt.push(index);
  });
  return { events, endedAt };
}

type Chunk = { choices: { delta: { content?: string; tool_calls?: { function: { arguments?: string; name?: string } }[] }; finish_reason: string | null }[] };

function chunksOf(events: ChatStreamEvent[]): Chunk[] {
  return events.flatMap((event) => (event.type === 'chunk-received' ? [event.chunk as unknown as Chunk] : []));
}

function streamedText(events: ChatStreamEvent[]): string {
  return chunksOf(events).map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

function lastUsage(events: ChatStreamEvent[]) {
  return events.filter((event) => event.type === 'usage-reported').at(-1);
}

/** A caller's chat request (OpenAI's shape) as the request mappings get it: without `model`, as the model call hands it on. */
function callerBody(name = 'openai/chat-request-tools.json'): JsonObject {
  const { model: _model, ...body } = json(name);
  return body;
}

describe('anthropic mappings', () => {
  test('request: system, an inline image, a tool round trip, tools, stop and max_completion_tokens as the Messages API takes them', () => {
    assert.deepEqual(toAnthropicRequest('claude-sonnet-4-5', { body: callerBody() }, false, 'anthropic').request, json('anthropic/messages-request.json'));
    assert.equal(toAnthropicRequest('claude-sonnet-4-5', { body: callerBody() }, true, 'anthropic').request.stream, true);
  });

  test('request: response_format json_schema becomes one forced tool whose input schema is the schema', () => {
    const plan = toAnthropicRequest('claude-sonnet-4-5', { body: callerBody('openai/chat-request-json-schema.json') }, false, 'anthropic');
    assert.deepEqual(plan.request, json('anthropic/messages-request-json-schema.json'));
    assert.equal(plan.structuredOutputTool, 'weather_report');
  });

  test('response: text and tool_use become content and tool_calls; cache reads and writes count as prompt tokens', () => {
    const message = parseResponse(json('anthropic/message-tool-use.json'));
    assert.ok(message !== null, 'the recorded message fits the Messages API schema');
    const { completion, usage } = anthropicCompletion(message, null, 1_700_000_000, 'anthropic');
    const choice = (completion.choices as JsonObject[])[0] as { message: JsonObject; finish_reason: string };
    assert.equal(completion.id, 'msg_01Aq9w938a90dw8q');
    assert.equal(completion.created, 1_700_000_000);
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, "I'll check the current weather in San Francisco for you.");
    assert.deepEqual(choice.message.tool_calls, [
      { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } },
    ]);
    assert.deepEqual(completion.usage, { prompt_tokens: 2572, completion_tokens: 89, total_tokens: 2661, prompt_tokens_details: { cached_tokens: 2000 } });
    assert.deepEqual(usage, { promptTokens: 2572, completionTokens: 89, totalTokens: 2661, cachedPromptTokens: 2000, cacheWritePromptTokens: 100, cacheWrite1hPromptTokens: null });
  });

  test('stream: text deltas, ping skipped, one usage report from message_start and message_delta, complete at message_stop', () => {
    const { events, endedAt } = readStream(new AnthropicChatFrames({ provider: 'anthropic', structuredOutputTool: null, created: 1 }), 'anthropic/stream-text.sse');
    assert.deepEqual(endedAt, [7], 'only message_stop completes the stream');
    assert.equal(streamedText(events), 'Hello!');
    assert.equal(chunksOf(events).at(-1)?.choices[0]?.finish_reason, 'stop');
    const usage = lastUsage(events);
    assert.equal(usage?.type, 'usage-reported');
    assert.deepEqual(usage?.type === 'usage-reported' ? [usage.usage.promptTokens, usage.usage.completionTokens] : null, [25, 15]);
  });

  test('stream: a tool_use block streams as one tool call whose argument pieces join into its input', () => {
    const { events } = readStream(new AnthropicChatFrames({ provider: 'anthropic', structuredOutputTool: null, created: 1 }), 'anthropic/stream-tool-use.sse');
    const calls = chunksOf(events).flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    assert.equal(calls[0]?.function.name, 'get_weather');
    assert.equal(calls.map((call) => call.function.arguments ?? '').join(''), '{"location": "San Francisco, CA"}');
    assert.equal(streamedText(events), "Okay, let's check the weather.");
    assert.equal(chunksOf(events).at(-1)?.choices[0]?.finish_reason, 'tool_calls');
  });

  test('stream: the forced structured-output tool streams its input as content, finishing with stop', () => {
    const frames = new AnthropicChatFrames({ provider: 'anthropic', structuredOutputTool: 'weather_report', created: 1 });
    const { events } = readStream(frames, 'anthropic/stream-structured-output.sse');
    assert.deepEqual(JSON.parse(streamedText(events)), { city: 'Paris', celsius: 18, conditions: 'cloudy' });
    assert.ok(chunksOf(events).every((chunk) => chunk.choices[0]?.delta.tool_calls === undefined), 'no tool call reaches the caller');
    assert.equal(chunksOf(events).at(-1)?.choices[0]?.finish_reason, 'stop');
  });

  test('error: a 429 rate_limit_error is provider_rate_limited with the Retry-After; the message stays in the log', () => {
    const error = anthropicFailure('anthropic', { status: 429, headers: { 'retry-after': '12' } }, text('anthropic/error-rate-limit.json'));
    assert.deepEqual([error.code, error.status, error.retryAfterSeconds], ['provider_rate_limited', 429, 12]);
    assert.match(String(error.upstream?.message), /^Number of request tokens has exceeded your per-minute rate limit/);
  });
});

describe('gemini mappings', () => {
  test('request: systemInstruction, inlineData, functionCall and functionResponse turns, declarations and tool config', () => {
    assert.deepEqual(toGenerateContentRequest({ body: callerBody() }), json('gemini/generate-content-request.json'));
  });

  test('request: response_format json_schema becomes responseSchema in OpenAPI types, keywords Gemini refuses left out', () => {
    assert.deepEqual(toGenerateContentRequest({ body: callerBody('openai/chat-request-json-schema.json') }), json('gemini/generate-content-request-json-schema.json'));
  });

  test('response: text and a functionCall become content and tool_calls; thinking tokens count as completion tokens', () => {
    const response = checkGenerateContentResponse(json('gemini/generate-content-function-call.json'), 'gemini');
    const { completion, usage } = geminiCompletion(response, 'gemini-2.5-flash', 'gemini');
    const choice = (completion.choices as JsonObject[])[0] as { message: { content: string; tool_calls: { type: string; function: { name: string; arguments: string } }[] }; finish_reason: string };
    assert.equal(completion.id, 'chatcmpl-f4ZtaOiIOpWxqtsPyePz-Ac');
    assert.equal(completion.model, 'gemini-2.5-flash');
    assert.equal(choice.message.content, 'Let me look that up.');
    assert.equal(choice.message.tool_calls.length, 1);
    assert.equal(choice.message.tool_calls[0]?.type, 'function');
    assert.equal(choice.message.tool_calls[0]?.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(choice.message.tool_calls[0]!.function.arguments), { location: 'Boston, MA' });
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(usage?.promptTokens, 61);
    assert.equal(usage?.completionTokens, 70);
    assert.equal(usage?.totalTokens, 131);
    assert.equal(usage?.cachedPromptTokens, 32);
  });

  test('stream: each frame\'s text is a delta, the last frame\'s reason finishes it, its cumulative usage counts', () => {
    const mapper = new GeminiStreamMapper('gemini-2.5-flash', 'gemini');
    const events = sseEvents('gemini/stream-generate-content.sse').flatMap((event) => mapper.map(checkGenerateContentResponse(JSON.parse(event.data), 'gemini')));
    assert.equal(streamedText(events), 'The sky is blue.');
    assert.equal(chunksOf(events).at(-1)?.choices[0]?.finish_reason, 'stop');
    const usage = lastUsage(events);
    assert.deepEqual(usage?.type === 'usage-reported' ? [usage.usage.promptTokens, usage.usage.completionTokens, usage.usage.totalTokens] : null, [9, 21, 30]);
  });

  test('embeddings: batchEmbedContents vectors in input order, as floats or base64 float32', () => {
    const response = checkBatchEmbedContentsResponse(json('gemini/batch-embed-contents.json'), 'gemini');
    const floats = toEmbeddingResult(response, { input: ['alpha', 'beta'], encoding_format: 'float' }, 'gemini-embedding-001');
    assert.deepEqual(
      (floats.response.data as { index: number; embedding: number[] }[]).map((item) => [item.index, item.embedding]),
      [[0, [-0.0063, 0.0117, 0.0254]], [1, [0.0211, -0.0072, 0.0198]]],
    );
    assert.deepEqual(floats.vectors, { count: 2, dimensions: 3 });
    assert.equal(floats.usage, null, 'Gemini reports no embedding tokens: "not reported", never zero');
    const base64 = toEmbeddingResult(response, { input: ['alpha', 'beta'], encoding_format: 'base64' }, 'gemini-embedding-001');
    const encoded = (base64.response.data as { embedding: string }[])[1]!.embedding;
    const bytes = Buffer.from(encoded, 'base64');
    const decoded = [...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)];
    assert.deepEqual(decoded.map((value) => Number(value.toFixed(4))), [0.0211, -0.0072, 0.0198]);
  });

  test('images: predictions become b64_json images; one the safety filter dropped is left out', () => {
    const result = toImageResult(checkPredictResponse(json('gemini/predict.json'), 'gemini'));
    const predictions = json('gemini/predict.json').predictions as { bytesBase64Encoded?: string }[];
    assert.deepEqual((result.response.data as JsonObject[]), [{ b64_json: predictions[0]!.bytesBase64Encoded }]);
    assert.equal(result.imageCount, 1);
  });

  test('error: a 400 API_KEY_INVALID is the gateway\'s own credential refused: a neutral 502, the reason in the log', () => {
    const error = geminiFailure('gemini', 400, {}, text('gemini/error-api-key-invalid.json'));
    assert.deepEqual([error.code, error.status], ['provider_error', 502]);
    assert.doesNotMatch(error.message, /API key/);
    assert.equal(error.upstream?.errorType, 'API_KEY_INVALID');
    assert.equal(error.upstream?.status, 400);
  });

  test('error: a 429 RESOURCE_EXHAUSTED waits for its RetryInfo delay when no Retry-After header came', () => {
    const error = geminiFailure('gemini', 429, {}, text('gemini/error-resource-exhausted.json'));
    assert.deepEqual([error.code, error.status, error.retryAfterSeconds], ['provider_rate_limited', 429, 27]);
  });
});

describe('openai mappings', () => {
  test('request: a file part in the gateway\'s own form becomes Chat Completions\' file part with a data URI', () => {
    const body = { messages: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: 'JVBERi0=', mime_type: 'application/pdf' }] }] };
    assert.deepEqual(openAIFileParts(body), {
      messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }],
    });
  });

  test('response: usage with its details is read as reported', () => {
    assert.deepEqual(usageFromWire(json('openai/chat-completion.json').usage), { promptTokens: 19, completionTokens: 10, totalTokens: 29, cachedPromptTokens: 0 });
  });

  test('stream: chunks go on with the provider\'s text, the usage-only chunk is the usage report, complete at [DONE]', () => {
    const { events, endedAt } = readStream(new ChatCompletionChunks('openai'), 'openai/stream-chat-completion.sse');
    assert.deepEqual(endedAt, [4]);
    const sent = sseEvents('openai/stream-chat-completion.sse');
    assert.deepEqual(
      events.flatMap((event) => (event.type === 'chunk-received' ? [event.json] : [])),
      sent.slice(0, 3).map((event) => event.data),
      'content chunks keep the provider\'s own text',
    );
    assert.equal(streamedText(events), 'Hello');
    const usage = lastUsage(events);
    assert.ok(usage?.type === 'usage-reported' && usage.chunk !== undefined, 'the usage-only chunk goes with the report');
    assert.deepEqual(usage.usage, { promptTokens: 9, completionTokens: 2, totalTokens: 11, cachedPromptTokens: 0 });
  });

  test('error: a 429 insufficient_quota is the gateway\'s account refused, not a rate limit to wait out', () => {
    const error = openAIFailure('openai', 429, {}, text('openai/error-insufficient-quota.json'));
    assert.deepEqual([error.code, error.status], ['provider_error', 502]);
    assert.deepEqual([error.upstream?.errorType, error.upstream?.errorCode], ['insufficient_quota', 'insufficient_quota']);
  });

  test('error: a 400 names the caller\'s field the provider named, with the provider\'s reason', () => {
    const error = openAIFailure('openai', 400, {}, text('openai/error-invalid-param.json'));
    assert.deepEqual([error.code, error.status, error.param], ['invalid_body', 400, 'temperature']);
    assert.match(error.message, /Invalid value for 'temperature'/);
  });
});

describe('extensions of a translated call (ADR 0021)', () => {
  const messages = [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, reasoning_content: 'Look it up.', reasoning_signature: 'anthropic:EqQB', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
  ];
  const tools = [{ type: 'function', function: { name: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const reasoning = { param: 'thinking', effort: null, budgetTokens: 4096, includeThoughts: true } as const;

  test('anthropic: reasoning as thinking with its budget, web search as its server tool, its own thinking sent back first', () => {
    const call = { body: { messages, tools, max_completion_tokens: 8192, temperature: 0.2 }, extensions: { reasoning, webSearch: { param: 'tools[1]', maxUses: 3, allowedDomains: null, blockedDomains: ['x.example'] } } };
    const { request } = toAnthropicRequest('claude-sonnet-4-5', call, false, 'anthropic');
    assert.deepEqual(request.thinking, { type: 'enabled', budget_tokens: 4096 });
    assert.equal(request.temperature, undefined, 'Anthropic refuses a temperature while Claude thinks');
    assert.deepEqual(hintsDroppedOf(call), ['temperature']);
    assert.deepEqual(request.tools?.at(-1), { type: 'web_search_20250305', name: 'web_search', max_uses: 3, blocked_domains: ['x.example'] });
    assert.deepEqual(request.messages[1]!.content[0], { type: 'thinking', thinking: 'Look it up.', signature: 'EqQB' });
    // Another provider's signature is never sent: the turn goes without its reasoning.
    const foreign = toAnthropicRequest('claude-sonnet-4-5', { body: { messages: [messages[0], { ...messages[1], reasoning_signature: 'gemini:c2ln' }, messages[2]] } }, false, 'anthropic');
    assert.equal(foreign.request.messages[1]!.content[0]!.type, 'tool_use');
  });

  test('anthropic: no room under max_tokens, or a forced tool, leaves the reasoning out and names it', () => {
    assert.deepEqual(hintsDroppedOf({ body: { messages, max_completion_tokens: 512 }, extensions: { reasoning } }), ['thinking']);
    assert.deepEqual(hintsDroppedOf({ body: { messages, tool_choice: 'required' }, extensions: { reasoning } }), ['thinking']);
    assert.equal(toAnthropicRequest('claude-sonnet-4-5', { body: { messages, max_completion_tokens: 512 }, extensions: { reasoning } }, false, 'anthropic').request.thinking, undefined);
  });

  test("gemini: a budget for 2.5 models, a level for 3, topK, and Google Search only where it can sit beside the caller's functions", () => {
    const search = { param: 'tools[1]', maxUses: null, allowedDomains: null, blockedDomains: null };
    const call = { body: { messages, tools }, extensions: { reasoning, topK: { param: 'top_k', value: 40 }, webSearch: search } };
    const flash = toGenerateContentRequest(call, 'gemini-2.5-flash');
    assert.deepEqual(flash.generationConfig?.thinkingConfig, { thinkingBudget: 4096, includeThoughts: true });
    assert.equal(flash.generationConfig?.topK, 40);
    assert.deepEqual(flash.tools?.map((tool) => Object.keys(tool)[0]), ['functionDeclarations']);
    assert.equal(searchDropped(call, 'gemini-2.5-flash'), 'tools[1]');
    const three = toGenerateContentRequest(call, 'gemini-3-pro-preview');
    assert.deepEqual(three.generationConfig?.thinkingConfig, { thinkingLevel: 'low', includeThoughts: true });
    assert.deepEqual(three.tools?.map((tool) => Object.keys(tool)[0]), ['functionDeclarations', 'googleSearch']);
    const alone = toGenerateContentRequest({ body: { messages: [messages[0]] }, extensions: { webSearch: search } }, 'gemini-2.5-flash');
    assert.deepEqual(alone.tools, [{ googleSearch: {} }]);
    assert.deepEqual(toGenerateContentRequest({ body: { messages: [messages[0]], reasoning_effort: 'high' } }, 'gemini-2.5-pro').generationConfig?.thinkingConfig, { thinkingBudget: 24_576 });
  });
});

describe("OpenAI's prompt count, made locally", () => {
  test("messages and their framing count as gpt-tokenizer's encodeChat counts them for GPT-4o; other models are not counted", async () => {
    const messages = [
      { role: 'system', content: 'You are brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Say <|endoftext|> twice, then stop.' }] },
      { role: 'assistant', content: 'Done.' },
    ];
    let counted = countPromptTokens({ messages }, 'gpt-4o-mini');
    for (let waited = 0; counted === null && waited < 100; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      counted = countPromptTokens({ messages }, 'gpt-4o-mini');
    }
    const chat = messages.map((message) => ({ role: message.role as 'system' | 'user' | 'assistant', content: typeof message.content === 'string' ? message.content : message.content[0]!.text }));
    assert.equal(counted, encodeChat(chat, 'gpt-4o', { disallowedSpecial: new Set() }).length);
    assert.equal(countPromptTokens({ messages }, 'gpt-4o-mini'), counted, 'counted again from the cache');
    assert.equal(countPromptTokens({ messages }, 'llama3.2:3b'), null);
  });
});
