import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../src/errors/index.js';
import { estimateInputTokens, messagesFormat, NativeMessagesStreamEncoder, refuseUntranslatable, type MessagesBody } from '../src/formats/index.js';
import type { ChunkReceived, JsonObject, MessagesEventReceived, TokenUsage } from '../src/model-api/index.js';
import { streamFramesOf, messageBody } from './fakes/anthropic.js';

/*
 * The Messages format without HTTP: the decoder against requests Claude's clients send, the
 * stream encoders against recorded streams (an OpenAI chat stream with text and a tool call;
 * an Anthropic stream with thinking), the response and error encoders.
 */

const chunk = (delta: JsonObject, finish: string | null = null): ChunkReceived => ({
  type: 'chunk-received',
  chunk: { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, finish_reason: finish }] },
});

/** A chat stream as OpenAI sends it: role, text, a tool call in pieces, the finish. */
const RECORDED_CHAT_STREAM: ChunkReceived[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Checking' }),
  chunk({ content: '.' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] }),
  chunk({}, 'tool_calls'),
];

const USAGE: TokenUsage = { promptTokens: 30, completionTokens: 8, totalTokens: 38, cachedPromptTokens: 10 };

function fixture(name: string): MessagesBody {
  return JSON.parse(readFileSync(new URL(`./fixtures/clients/${name}`, import.meta.url), 'utf8')) as MessagesBody;
}

function decode(body: Partial<MessagesBody>) {
  return messagesFormat.decodeRequest({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], ...body } as MessagesBody, undefined);
}

describe('Messages stream encoder (translated)', () => {
  test('a recorded chat stream becomes the documented event sequence, byte for byte', () => {
    const encoder = messagesFormat.streamEncoder(decode({ model: 'gpt-4o-mini' }), { transcriptCharacters: 1000 });
    const text = RECORDED_CHAT_STREAM.map((event) => encoder.encode(event)).join('') + encoder.end(USAGE);
    const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    assert.equal(
      text,
      // No count from the provider or its tokenizer: message_start has the format's estimate of "Hi".
      frame('message_start', { type: 'message_start', message: { id: 'chatcmpl-1', type: 'message', role: 'assistant', model: 'gpt-4o-mini', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 } } }) +
        frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        frame('ping', { type: 'ping' }) +
        frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking' } }) +
        frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '.' } }) +
        frame('content_block_stop', { type: 'content_block_stop', index: 0 }) +
        frame('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } }) +
        frame('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' } }) +
        frame('content_block_stop', { type: 'content_block_stop', index: 1 }) +
        frame('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, output_tokens: 8 } }) +
        frame('message_stop', { type: 'message_stop' }),
    );
    const transcript = encoder.transcript(USAGE, true);
    assert.equal((transcript.choices as { content: string }[])[0]!.content, 'Checking.');
  });

  test("the provider's early prompt count is message_start's, its reasoning a thinking block with its signature", () => {
    const encoder = messagesFormat.streamEncoder(decode({ model: 'gemini-2.5-flash' }), { transcriptCharacters: 1000, promptTokens: () => 999 });
    const early: TokenUsage = { promptTokens: 42, completionTokens: 0, totalTokens: 42, cachedPromptTokens: null };
    let text = encoder.usage({ type: 'usage-reported', usage: early });
    for (const delta of [{ role: 'assistant', reasoning_content: 'Hmm' }, { reasoning_content: ', yes.' }, { reasoning_signature: 'gemini:c2ln' }, { content: 'Yes.' }]) text += encoder.encode(chunk(delta));
    text += encoder.encode(chunk({}, 'stop')) + encoder.end(USAGE);
    const frames = text.split('\n\n').filter(Boolean).map((frame) => JSON.parse(frame.split('\n')[1]!.slice('data: '.length)) as JsonObject);
    assert.equal(((frames[0]!.message as JsonObject).usage as JsonObject).input_tokens, 42);
    assert.deepEqual(frames[1], { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
    assert.deepEqual(
      frames.filter((frame) => frame.type === 'content_block_delta').map((frame) => frame.delta),
      [{ type: 'thinking_delta', thinking: 'Hmm' }, { type: 'thinking_delta', thinking: ', yes.' }, { type: 'signature_delta', signature: 'gemini:c2ln' }, { type: 'text_delta', text: 'Yes.' }],
    );
  });

  test("without an early count message_start has the provider's local count", () => {
    const encoder = messagesFormat.streamEncoder(decode({ model: 'gpt-4o-mini' }), { transcriptCharacters: 0, promptTokens: () => 17 });
    assert.match(encoder.encode(chunk({ content: 'Hi' })), /"usage":\{"input_tokens":17,/);
  });

  test('a stream with no content still starts and ends as the SDKs require', async () => {
    const encoder = messagesFormat.streamEncoder(decode({}), { transcriptCharacters: 0 });
    const names = [...(await encoder.end(null)).matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    assert.deepEqual(names, ['message_start', 'message_delta', 'message_stop']);
  });

  test('a failure is an error event in Anthropic shape', () => {
    const encoder = messagesFormat.streamEncoder(decode({}), { transcriptCharacters: 0 });
    const frame = encoder.fail(new GatewayError('provider_error', 'The model provider failed.'), 'req_1');
    assert.equal(frame, 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"The model provider failed."},"request_id":"req_1"}\n\n');
  });
});

describe('Messages stream encoder (native pass-through)', () => {
  test('a recorded Anthropic stream goes out as it came, only message_start showing the requested model', () => {
    const frames = streamFramesOf(messageBody({ model: 'claude-sonnet-4-5', content: [{ type: 'thinking', thinking: 'Hmm, let me see.', signature: 'sig-1' } as never, { type: 'text', text: 'Hello there' }] }));
    const encoder = new NativeMessagesStreamEncoder('claude-sonnet', { transcriptCharacters: 1000 });
    const sent = frames.map(([event, data]) => encoder.encode({ type: 'messages-event-received', event, data: JSON.stringify(data), value: structuredClone(data) as JsonObject } satisfies MessagesEventReceived)).join('');
    const expected = frames
      .map(([event, data]) => {
        const shown = event === 'message_start' ? { ...(data as JsonObject), message: { ...((data as JsonObject).message as JsonObject), model: 'claude-sonnet' } } : data;
        return `event: ${event}\ndata: ${JSON.stringify(shown)}\n\n`;
      })
      .join('');
    assert.equal(sent, expected);
    assert.equal(encoder.end(null), '');
    const transcript = encoder.transcript(null, true);
    assert.deepEqual(transcript.content, [
      { type: 'thinking', text: 'Hmm, let me see.' },
      { type: 'text', text: 'Hello there' },
    ]);
    assert.equal(transcript.stop_reason, 'end_turn');
  });

  test('the transcript keeps no more text than the log stores', () => {
    const encoder = new NativeMessagesStreamEncoder('m', { transcriptCharacters: 4 });
    for (const [event, data] of streamFramesOf(messageBody({ content: [{ type: 'text', text: 'abcdefghij' }] }))) {
      encoder.encode({ type: 'messages-event-received', event, data: JSON.stringify(data), value: data as JsonObject });
    }
    const transcript = encoder.transcript(null, false);
    assert.deepEqual(transcript.content, [{ type: 'text', text: 'abcd' }]);
    assert.equal(transcript.characters_not_kept, 6);
    assert.equal(transcript.complete, false);
  });
});

describe('Messages request decoder', () => {
  test('tool results become tool messages ahead of the turn; a failed one says so', () => {
    const decoded = decode({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 't1', name: 'w', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content: [{ type: 'text', text: 'timeout' }] }] },
      ],
    });
    assert.deepEqual(decoded.body.messages, [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 't1', type: 'function', function: { name: 'w', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'Error: timeout' },
    ]);
  });

  test('images and PDFs become image_url and file parts', () => {
    const decoded = decode({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
      ],
    });
    assert.deepEqual((decoded.body.messages as JsonObject[])[0]!.content, [
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
    ]);
  });

  test('tool_choice maps to its chat equivalent', () => {
    assert.deepEqual(decode({ tool_choice: { type: 'tool', name: 'w', disable_parallel_tool_use: true } }).body.tool_choice, { type: 'function', function: { name: 'w' } });
    assert.equal(decode({ tool_choice: { type: 'tool', name: 'w', disable_parallel_tool_use: true } }).body.parallel_tool_calls, false);
    assert.equal(decode({ tool_choice: { type: 'none' } }).body.tool_choice, 'none');
  });

  test("Claude Code's request: system mid-conversation in its place, thinking and effort as reasoning, web search as its extension, serving hints dropped and named", () => {
    const decoded = messagesFormat.decodeRequest(fixture('claude-code-messages.json'), undefined);
    const messages = decoded.body.messages as JsonObject[];
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'system', 'user'],
    );
    assert.equal(messages[4]!.content, '<system-reminder>The user changed the output style.</system-reminder>');
    assert.equal(messages[2]!.reasoning_content, 'Let me read the README.');
    assert.equal(messages[2]!.reasoning_signature, undefined, 'an empty signature is none');
    assert.deepEqual(decoded.extensions, {
      reasoning: { param: 'thinking', effort: 'high', budgetTokens: null, includeThoughts: true },
      webSearch: { param: 'tools[2]', maxUses: 8, allowedDomains: null, blockedDomains: null },
    });
    assert.deepEqual((decoded.body.tools as JsonObject[]).map((tool) => (tool.function as JsonObject).name), ['Read', 'Bash']);
    assert.equal(decoded.body.user, 'user_2f0c_account_9d2a_session_7b43');
    assert.deepEqual(decoded.dropped.sort(), ['context_management', 'messages[0].content[1].cache_control', 'system[0].cache_control', 'tools[1].cache_control'].sort());
    assert.deepEqual(decoded.untranslatable, []);
  });

  test('thinking with a budget, top_k and output_config.format map; a tool only Anthropic runs is listed and refused naming it', () => {
    const decoded = decode({
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string' } } } } },
      tools: [{ type: 'code_execution_20250825', name: 'code_execution' }],
      mcp_servers: [{ type: 'url', url: 'https://mcp.example/sse', name: 'x' }],
    });
    assert.deepEqual(decoded.extensions, { topK: { param: 'top_k', value: 5 }, reasoning: { param: 'thinking', effort: null, budgetTokens: 2048, includeThoughts: true } });
    assert.deepEqual(decoded.body.response_format, { type: 'json_schema', json_schema: { name: 'output', schema: { type: 'object', properties: { a: { type: 'string' } } } } });
    assert.deepEqual(decoded.untranslatable.map((entry) => entry.param), ['mcp_servers', 'tools[0].type']);
    assert.throws(() => refuseUntranslatable(decoded), (error: unknown) => error instanceof GatewayError && error.code === 'unsupported_field' && error.status === 400 && error.param === 'mcp_servers');
    assert.equal(decode({ thinking: { type: 'disabled' } }).extensions, undefined);
    assert.throws(() => decode({ output_config: { effort: 'extreme' } }), (error: unknown) => error instanceof GatewayError && error.param === 'output_config.effort');
  });
});

describe('Messages response and error encoders', () => {
  test('a chat.completion becomes a message; input_tokens leave out cached tokens', () => {
    const message = messagesFormat.encodeResponse(
      {
        completion: { id: 'c1', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', tool_calls: [{ id: 'k', function: { name: 'f', arguments: 'not json' } }] }, finish_reason: 'length' }] },
        usage: USAGE,
      },
      decode({ model: 'alias' }),
    );
    assert.deepEqual(message, {
      id: 'c1',
      type: 'message',
      role: 'assistant',
      model: 'alias',
      content: [{ type: 'text', text: 'Hi' }, { type: 'tool_use', id: 'k', name: 'f', input: { arguments: 'not json' } }],
      stop_reason: 'max_tokens',
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 10, output_tokens: 8 },
    });
  });

  test('each status has its Anthropic error type, and request-id is set', () => {
    const cases: [ConstructorParameters<typeof GatewayError>[0], string][] = [
      ['invalid_body', 'invalid_request_error'],
      ['invalid_api_key', 'authentication_error'],
      ['model_not_allowed', 'permission_error'],
      ['not_found', 'not_found_error'],
      ['request_too_large', 'request_too_large'],
      ['rate_limit_exceeded', 'rate_limit_error'],
      ['provider_timeout', 'timeout_error'],
      ['provider_error', 'api_error'],
    ];
    for (const [code, type] of cases) {
      const encoded = messagesFormat.encodeError(new GatewayError(code, 'm'), 'req_9');
      assert.deepEqual(encoded, { body: { type: 'error', error: { type, message: 'm' }, request_id: 'req_9' }, headers: { 'request-id': 'req_9' } }, code);
    }
  });

  test('count_tokens estimates a quarter token a character, media at a fixed count', () => {
    const tokens = estimateInputTokens({
      model: 'm',
      system: 'abcd',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'efgh' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'x'.repeat(4000) } }] }],
    });
    assert.equal(tokens, 2 + 1_600);
  });
});
