import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import {
  decodeResponsesRequest,
  encodeResponse,
  inputItemsOf,
  policyMessagesOf,
  responseSkeleton,
  ResponsesPassThroughEncoder,
  ResponsesStreamEncoder,
} from '../src/formats/responses/index.js';
import type { StreamEncoder } from '../src/formats/index.js';
import type { ToolNames } from '../src/formats/responses/request-decoder.js';
import type { ChatStreamEvent, JsonObject, ResponseEventReceived, StreamEvent, TokenUsage } from '../src/model-api/index.js';
import { GatewayError } from '../src/errors/index.js';

/*
 * The Responses format's mappers, pure: the request decoder, the response encoder and the
 * stream encoder, the last fed recorded chat streams and checked by the official SDK's own
 * accumulator (what `responses.stream(...).finalResponse()` runs).
 */

/** A chat.completion.chunk as OpenAI streams it (recorded shape: gpt-4.1-nano, 2026). */
function chunk(delta: JsonObject, finishReason: string | null = null): ChatStreamEvent {
  return {
    type: 'chunk-received',
    chunk: {
      id: 'chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0',
      object: 'chat.completion.chunk',
      created: 1770933892,
      model: 'gpt-4.1-nano-2025-04-14',
      service_tier: 'default',
      system_fingerprint: 'fp_de604bd877',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      usage: null,
    },
  };
}

const TEXT_STREAM: ChatStreamEvent[] = [
  chunk({ role: 'assistant', content: '', refusal: null }),
  chunk({ content: '**' }),
  chunk({ content: 'Holiday' }),
  chunk({ content: ' Name' }),
  chunk({ content: ':**' }),
  chunk({}, 'stop'),
  { type: 'usage-reported', usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17, cachedPromptTokens: 0 } },
];

/** A tool call as OpenAI's chat stream sends it: id, type and name first, then argument pieces. */
const TOOL_STREAM: ChatStreamEvent[] = [
  chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_2FQdm3Br7Qb35YUBSkDR7kue', type: 'function', function: { name: 'get_weather', arguments: '' } }], refusal: null }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: 'city' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '":"Beijing"}' } }] }),
  chunk({}, 'tool_calls'),
  { type: 'usage-reported', usage: { promptTokens: 45, completionTokens: 25, totalTokens: 70, cachedPromptTokens: null } },
];

interface Frame {
  event: string;
  data: ResponseStreamEvent;
}

function framesOf(text: string): Frame[] {
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      assert.equal(rest.length, 0, 'one event line and one data line per frame');
      assert.match(eventLine!, /^event: /);
      assert.match(dataLine!, /^data: /);
      return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) as ResponseStreamEvent };
    });
}

/** Feeds events to an encoder as the stream relay does; the frames it wrote. */
async function relay<D extends { type: string }>(encoder: StreamEncoder<D>, events: StreamEvent<D>[]): Promise<Frame[]> {
  let text = '';
  let usage: TokenUsage | null = null;
  for (const event of events) {
    if (event.type === 'usage-reported') {
      usage = (event as { usage: TokenUsage }).usage;
      text += encoder.usage(event as never);
    } else {
      text += encoder.encode(event as D);
    }
  }
  text += await encoder.end(usage);
  return framesOf(text);
}

function translatedEncoder(body: JsonObject = {}, kept: JsonObject[] = [], tools: ToolNames = new Map()): ResponsesStreamEncoder {
  const skeleton = responseSkeleton(body, { id: 'resp_test', createdAt: 1_770_933_892, model: 'gpt-4.1-nano' });
  return new ResponsesStreamEncoder({ skeleton, transcriptCharacters: 10_000, keep: async (response) => void kept.push(response), tools });
}

async function encodeStream(events: ChatStreamEvent[], body: JsonObject = {}): Promise<{ frames: Frame[]; kept: JsonObject[] }> {
  const kept: JsonObject[] = [];
  const frames = await relay(translatedEncoder(body, kept), events);
  return { frames, kept };
}

/** Applies the frames as the SDK's stream helper does; throws where it would. */
function accumulate(frames: Frame[]): Response {
  let snapshot: Response | undefined;
  for (const frame of frames) snapshot = accumulateResponse(frame.data, snapshot);
  assert.ok(snapshot !== undefined);
  return snapshot;
}

/** Decodes a body as the route does: its input read as items, after `history`. */
function decode(body: JsonObject, history: JsonObject[] = []) {
  return decodeResponsesRequest(body, { history, input: inputItemsOf(body.input) });
}

describe('Responses request decoder', () => {
  test('a string input, instructions, function tools, tool_choice, text.format and limits become the chat request', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const body = {
      model: 'claude-sonnet-4-5',
      input: 'Weather in Paris?',
      instructions: 'Be brief.',
      tools: [{ type: 'function', name: 'get_weather', description: 'Get weather', parameters: schema, strict: true }],
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      text: { format: { type: 'json_schema', name: 'weather', schema, strict: true } },
      metadata: { team: 'a' },
      store: true,
    };
    const decoded = decode(body);
    assert.deepEqual(decoded.chat, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Get weather', parameters: schema, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    assert.deepEqual(decoded.dropped, []);
    const items = inputItemsOf(body.input);
    assert.equal(items.length, 1);
    assert.match(String(items[0]!.id), /^msg_/);
  });

  test('history, function calls and their outputs, images and files map to chat messages', () => {
    const history = [
      { id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
      { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'fc_2', type: 'function_call', status: 'completed', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
    ];
    const decoded = decode(
      {
        input: [
          { type: 'function_call_output', call_id: 'call_a', output: '18C' },
          { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: '25C' }] },
          {
            role: 'user',
            content: [
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
              { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            ],
          },
        ],
      },
      history,
    );
    assert.deepEqual(decoded.chat.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '18C' },
      { role: 'tool', tool_call_id: 'call_b', content: '25C' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
        ],
      },
    ]);
    const items = inputItemsOf([{ type: 'function_call_output', call_id: 'call_a', output: '18C' }, { role: 'assistant', content: 'Done.' }]);
    assert.match(String(items[0]!.id), /^item_/);
    assert.deepEqual({ ...items[1], id: 'msg' }, { id: 'msg', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] });
  });

  test('a tool only OpenAI runs, or a field held in an OpenAI account, is a 400 naming it; serving hints are dropped and named', () => {
    const refused = (body: JsonObject, param: string, code = 'unsupported_field') =>
      assert.throws(() => decode({ input: 'hi', ...body }), (error: unknown) => error instanceof GatewayError && error.code === code && error.param === param, param);
    refused({ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, 'tools[0].type');
    refused({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, 'tools[0].type');
    refused({ tools: [{ type: 'mcp', server_label: 'x', server_url: 'https://mcp.example' }] }, 'tools[0].type');
    refused({ tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' }] }, 'tools[0].type');
    refused({ prompt: { id: 'pmpt_1' } }, 'prompt');
    refused({ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type');
    refused({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, 'input[0].content[0].image_url', 'invalid_body');
    refused({ tool_choice: { type: 'web_search_preview' } }, 'tool_choice', 'invalid_body');
    const decoded = decode({ input: [{ type: 'reasoning', id: 'rs_1', summary: [] }, { role: 'user', content: 'hi' }], reasoning: { effort: 'low' }, truncation: 'auto', client_metadata: { a: 'b' } });
    assert.deepEqual(decoded.dropped, ['truncation', 'client_metadata']);
    assert.deepEqual(decoded.extensions, { reasoning: { param: 'reasoning', effort: 'low', budgetTokens: null, includeThoughts: false } });
  });

  test("Codex's request: namespace tools flattened, custom tools as one-argument functions, web search as its extension, reasoning kept for its provider, hints dropped", () => {
    const body = JSON.parse(readFileSync(new URL('./fixtures/clients/codex-responses.json', import.meta.url), 'utf8')) as JsonObject;
    const decoded = decode(body);
    const { messages, tools } = decoded.chat as { messages: JsonObject[]; tools: JsonObject[] };
    assert.deepEqual(tools.map((tool) => (tool.function as JsonObject).name), ['shell', 'update_plan', 'apply_patch', 'view_image', 'mcp__files__read_file']);
    const patch = tools[2]!.function as JsonObject;
    assert.deepEqual(patch.parameters, { type: 'object', properties: { input: { type: 'string', description: 'The freeform input of the tool.' } }, required: ['input'] });
    assert.match(String(patch.description), /lark grammar:\nstart: begin_patch/);
    assert.deepEqual(decoded.tools.get('mcp__files__read_file'), { name: 'read_file', namespace: 'mcp__files' });
    assert.deepEqual(decoded.tools.get('apply_patch'), { name: 'apply_patch', custom: true });
    assert.deepEqual(messages.map((message) => message.role), ['system', 'developer', 'user', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
    assert.equal(messages[4]!.reasoning_content, '**Listing files first**');
    assert.equal(messages[4]!.reasoning_signature, 'anthropic:EqQBCkgIARABGAIiQL2');
    assert.deepEqual((messages[6]!.tool_calls as JsonObject[])[0], { id: 'call_patch1', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}' } });
    assert.equal(((messages[8]!.tool_calls as JsonObject[])[0]!.function as JsonObject).name, 'mcp__files__read_file');
    assert.deepEqual(decoded.extensions, {
      webSearch: { param: 'tools[5]', maxUses: null, allowedDomains: null, blockedDomains: null },
      reasoning: { param: 'reasoning', effort: 'medium', budgetTokens: null, includeThoughts: true },
    });
    assert.deepEqual(decoded.dropped.sort(), ['client_metadata', 'include', 'prompt_cache_key', 'text.verbosity', 'tools[5].external_web_access'].sort());
  });

  test('an image by file id is refused for every provider, named where it stands', () => {
    const history = inputItemsOf('Earlier.');
    assert.throws(
      () => policyMessagesOf({ history, input: inputItemsOf([{ role: 'user', content: [{ type: 'input_image', file_id: 'file-abc' }] }]) }),
      (error: unknown) => error instanceof GatewayError && error.param === 'input[0].content[0].image_url',
    );
  });

  test('the input policy sees the user parts of items that go to a provider untranslated', () => {
    const items = inputItemsOf([
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' },
      { role: 'user', content: [{ type: 'input_text', text: 'Look' }, { type: 'input_image', image_url: 'https://user:pw@example.com/a.png' }, { type: 'input_audio', input_audio: {} }] },
      { role: 'assistant', content: 'Seen.' },
    ]);
    assert.deepEqual(policyMessagesOf({ history: [], input: items }), [
      { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'https://user:pw@example.com/a.png' } }] },
    ]);
  });
});

describe('Responses response encoder', () => {
  const skeleton = responseSkeleton({ instructions: 'Be brief.', metadata: { team: 'a' }, store: false }, { id: 'resp_1', createdAt: 1, model: 'claude-sonnet-4-5' });

  test('text and tool calls become a message item and function_call items, usage in the API words', () => {
    const response = encodeResponse(
      skeleton,
      {
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13, completion_tokens_details: { reasoning_tokens: 2 } },
      },
      { promptTokens: 10, completionTokens: 3, totalTokens: 13, cachedPromptTokens: 4 },
      new Map(),
    );
    assert.equal(response.status, 'completed');
    assert.equal(response.model, 'claude-sonnet-4-5');
    assert.equal(response.store, false);
    assert.deepEqual(response.metadata, { team: 'a' });
    const output = response.output as JsonObject[];
    assert.deepEqual(output.map((item) => item.type), ['message', 'function_call']);
    assert.deepEqual((output[0]!.content as JsonObject[])[0], { type: 'output_text', annotations: [], logprobs: [], text: 'Checking.' });
    assert.deepEqual({ ...output[1], id: 'fc' }, { id: 'fc', type: 'function_call', status: 'completed', arguments: '{"city":"Paris"}', call_id: 'call_a', name: 'get_weather' });
    assert.deepEqual(response.usage, {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 13,
    });
  });

  test('an answer cut by the length limit is incomplete with reason max_output_tokens', () => {
    const response = encodeResponse(skeleton, { choices: [{ index: 0, message: { role: 'assistant', content: 'Par' }, finish_reason: 'length' }] }, null, new Map());
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  });
});

describe('Responses stream encoder', () => {
  test('a recorded text stream gives the events in the SDK helper order, numbered from 0', async () => {
    const { frames, kept } = await encodeStream(TEXT_STREAM);
    assert.deepEqual(
      frames.map((frame) => frame.event),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    for (const [index, frame] of frames.entries()) {
      assert.equal(frame.data.type, frame.event);
      assert.equal(frame.data.sequence_number, index);
    }
    const final = accumulate(frames);
    assert.equal(final.status, 'completed');
    assert.equal(final.output_text, '**Holiday Name:**');
    assert.deepEqual(final.usage, { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17 });
    assert.deepEqual(kept, [(frames.at(-1)!.data as { response: unknown }).response], 'the finished response is kept, as the last event shows it');
  });

  test('a recorded tool-call stream gives a function_call item with its argument events', async () => {
    const { frames } = await encodeStream(TOOL_STREAM, { tools: [{ type: 'function', name: 'get_weather' }] });
    assert.deepEqual(
      frames.map((frame) => frame.event),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    const final = accumulate(frames);
    assert.equal(final.output.length, 1);
    const call = final.output[0]!;
    assert.equal(call.type, 'function_call');
    if (call.type === 'function_call') {
      assert.equal(call.call_id, 'call_2FQdm3Br7Qb35YUBSkDR7kue');
      assert.equal(call.name, 'get_weather');
      assert.equal(call.arguments, '{"city":"Beijing"}');
    }
  });

  test('text before a tool call is closed first; the items keep their output indexes', async () => {
    const events = [chunk({ role: 'assistant', content: 'Let me check.' }), ...TOOL_STREAM.slice(0, 4), chunk({}, 'tool_calls')];
    const { frames } = await encodeStream(events);
    const final = accumulate(frames);
    assert.deepEqual(final.output.map((item) => item.type), ['message', 'function_call']);
    assert.equal(final.output_text, 'Let me check.');
    const added = frames.filter((frame) => frame.event === 'response.output_item.added').map((frame) => (frame.data as { output_index: number }).output_index);
    assert.deepEqual(added, [0, 1]);
  });

  test('a provider failure mid-stream ends with response.failed and the text so far', () => {
    const encoder = translatedEncoder();
    const failure = new GatewayError('provider_error', 'The model provider failed during the stream. Try again later.');
    const text = encoder.encode(chunk({ content: 'Hal' }) as never) + encoder.fail(failure);
    const frames = framesOf(text);
    assert.equal(frames.at(-1)!.event, 'response.failed');
    const final = accumulate(frames);
    assert.equal(final.status, 'failed');
    assert.equal(final.output_text, 'Hal');
    assert.deepEqual(final.error, { code: 'server_error', message: 'The model provider failed during the stream. Try again later.' });
  });

  test("reasoning, a namespace's function and a custom tool stream as the SDK helper assembles them; an early prompt count is in response.created", async () => {
    const tools: ToolNames = new Map([
      ['mcp__files__read_file', { name: 'read_file', namespace: 'mcp__files' }],
      ['apply_patch', { name: 'apply_patch', custom: true }],
    ]);
    const usage = { promptTokens: 30, completionTokens: 0, totalTokens: 30, cachedPromptTokens: null };
    const events: ChatStreamEvent[] = [
      { type: 'usage-reported', usage },
      chunk({ role: 'assistant', reasoning_content: '**Reading' }),
      chunk({ reasoning_content: ' first**' }),
      chunk({ reasoning_signature: 'anthropic:EqQB' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_r', type: 'function', function: { name: 'mcp__files__read_file', arguments: '{"path":"a"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: ' Patch"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const kept: JsonObject[] = [];
    const frames = await relay(translatedEncoder({}, kept, tools), events);
    assert.deepEqual((frames[0]!.data as { response: { usage: { input_tokens: number } } }).response.usage.input_tokens, 30);
    assert.ok(frames.some((frame) => frame.event === 'response.reasoning_summary_text.delta'));
    const final = accumulate(frames);
    assert.deepEqual(final.output.map((item) => item.type), ['reasoning', 'function_call', 'custom_tool_call']);
    assert.deepEqual({ ...final.output[0], id: 'rs' }, { id: 'rs', type: 'reasoning', summary: [{ type: 'summary_text', text: '**Reading first**' }], encrypted_content: 'anthropic:EqQB' });
    assert.deepEqual({ ...final.output[1], id: 'fc' }, { id: 'fc', type: 'function_call', status: 'completed', arguments: '{"path":"a"}', call_id: 'call_r', name: 'read_file', namespace: 'mcp__files' });
    assert.deepEqual({ ...final.output[2], id: 'ctc' }, { id: 'ctc', type: 'custom_tool_call', status: 'completed', call_id: 'call_p', input: '*** Begin Patch', name: 'apply_patch' });
    assert.deepEqual(kept[0]!.output, final.output, 'the stored response is what the caller assembled');
  });

  test('a length stop ends with response.incomplete', async () => {
    const { frames } = await encodeStream([chunk({ content: 'Par' }), chunk({}, 'length')]);
    assert.equal(frames.at(-1)!.event, 'response.incomplete');
    assert.equal(accumulate(frames).incomplete_details?.reason, 'max_output_tokens');
  });
});

/** OpenAI's own Responses stream, recorded (gpt-4o-mini, 2026; ids shortened), as its data lines. */
const OPENAI_STREAM = [
  '{"type":"response.created","response":{"id":"resp_rec","object":"response","created_at":1788205738,"status":"in_progress","model":"gpt-4o-mini-2024-07-18","output":[],"usage":null,"metadata":{}},"sequence_number":0}',
  '{"type":"response.in_progress","response":{"id":"resp_rec","object":"response","created_at":1788205738,"status":"in_progress","model":"gpt-4o-mini-2024-07-18","output":[],"usage":null,"metadata":{}},"sequence_number":1}',
  '{"type":"response.output_item.added","item":{"id":"msg_rec","type":"message","status":"in_progress","content":[],"role":"assistant"},"output_index":0,"sequence_number":2}',
  '{"type":"response.content_part.added","content_index":0,"item_id":"msg_rec","output_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""},"sequence_number":3}',
  '{"type":"response.output_text.delta","content_index":0,"delta":"OK","item_id":"msg_rec","logprobs":[],"output_index":0,"sequence_number":4}',
  '{"type":"response.output_text.done","content_index":0,"item_id":"msg_rec","logprobs":[],"output_index":0,"sequence_number":5,"text":"OK"}',
  '{"type":"response.content_part.done","content_index":0,"item_id":"msg_rec","output_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"OK"},"sequence_number":6}',
  '{"type":"response.output_item.done","item":{"id":"msg_rec","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"OK"}],"role":"assistant"},"output_index":0,"sequence_number":7}',
  '{"type":"response.completed","response":{"id":"resp_rec","object":"response","created_at":1788205738,"status":"completed","model":"gpt-4o-mini-2024-07-18","output":[{"id":"msg_rec","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"OK"}],"role":"assistant"}],"usage":{"input_tokens":12,"input_tokens_details":{"cache_write_tokens":0,"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":14},"metadata":{}},"sequence_number":8}',
];

describe('Responses pass-through encoder', () => {
  /** An event as the OpenAI provider hands it on: parsed only when it carries the response. */
  const received = (json: string): ResponseEventReceived => {
    const event = JSON.parse(json) as JsonObject;
    return { type: 'response-event-received', eventType: String(event.type), event: 'response' in event ? event : null, json };
  };

  test("a provider's own recorded stream goes on event for event, the caller's model in the lifecycle events", async () => {
    const kept: JsonObject[] = [];
    const encoder = new ResponsesPassThroughEncoder({ requestedModel: 'gpt-4o-mini', keep: async (response) => void kept.push(response) });
    const events: StreamEvent<ResponseEventReceived>[] = [...OPENAI_STREAM.map(received), { type: 'usage-reported', usage: { promptTokens: 12, completionTokens: 2, totalTokens: 14, cachedPromptTokens: 0 } }];
    const beforeEnd = events.map((event) => (event.type === 'usage-reported' ? encoder.usage(event) : encoder.encode(event as ResponseEventReceived))).join('');
    assert.ok(!beforeEnd.includes('response.completed'), 'the final event waits until the response is kept');
    const frames = framesOf(beforeEnd + (await encoder.end(null)));
    assert.deepEqual(frames.map((frame) => frame.data.sequence_number), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    for (const [index, frame] of frames.entries()) {
      const original = JSON.parse(OPENAI_STREAM[index]!) as { response?: JsonObject };
      if (original.response === undefined) assert.deepEqual(frame.data, original, 'item events are the provider\'s own');
      else assert.deepEqual(frame.data, { ...original, response: { ...original.response, model: 'gpt-4o-mini' } });
    }
    const final = accumulate(frames);
    assert.equal(final.output_text, 'OK');
    assert.equal(kept.length, 1);
    assert.equal(kept[0]!.id, 'resp_rec');
  });

  test("a provider's own response.failed goes on as sent and is not kept", async () => {
    const kept: JsonObject[] = [];
    const encoder = new ResponsesPassThroughEncoder({ requestedModel: 'gpt-4o-mini', keep: async (response) => void kept.push(response) });
    const failed = '{"type":"response.failed","response":{"id":"resp_rec","object":"response","status":"failed","error":{"code":"server_error","message":"An error occurred."},"output":[],"model":"gpt-4o-mini-2024-07-18"},"sequence_number":2}';
    const text = OPENAI_STREAM.slice(0, 2).map((json) => encoder.encode(received(json))).join('') + encoder.encode(received(failed)) + (await encoder.end(null));
    assert.deepEqual(framesOf(text).map((frame) => frame.event), ['response.created', 'response.in_progress', 'response.failed']);
    assert.deepEqual(kept, []);
  });

  test('an event whose JSON has line breaks between its tokens goes on as one event, meaning the same', () => {
    const encoder = new ResponsesPassThroughEncoder({ requestedModel: 'gpt-4o-mini', keep: async () => undefined });
    const delta = '{"type":"response.output_text.delta",\r\n"item_id":"msg_rec","output_index":0,\n"content_index":0,"delta":"a\\nb","sequence_number":4}';
    const frames = framesOf(encoder.encode(received(delta)));
    assert.equal(frames.length, 1);
    assert.deepEqual(frames[0]!.data, JSON.parse(delta));
  });

  test('a failure after the start ends with response.failed numbered after the last event', () => {
    const encoder = new ResponsesPassThroughEncoder({ requestedModel: 'gpt-4o-mini', keep: async () => undefined });
    const text = OPENAI_STREAM.slice(0, 5).map((json) => encoder.encode(received(json))).join('') + encoder.fail(new GatewayError('provider_error', 'The model provider failed. Try again later.'));
    const frames = framesOf(text);
    assert.equal(frames.at(-1)!.event, 'response.failed');
    assert.equal(frames.at(-1)!.data.sequence_number, 5);
    assert.equal(accumulate(frames).status, 'failed');
  });
});
