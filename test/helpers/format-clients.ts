/**
 * The public formats of the format conformance suite (test/formats-conformance.test.ts), each
 * driven by its official SDK and read back into one neutral outcome the cases assert.
 */
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI, type Content, type GenerateContentResponse } from '@google/genai';
import OpenAI from 'openai';
import type { NeutralUsage } from './format-vendors.js';

/** A weather tool every format declares in its own words. */
export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
} as const;

export interface ToolCallSeen {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** What a client read from one answer. */
export interface Outcome {
  text: string;
  /** The format's own word for how the answer ended. */
  stop: string;
  /** The format's usage in OpenAI's sense (input with cached tokens); reasoning null where the format has no field. */
  usage: Omit<NeutralUsage, 'reasoning'> & { reasoning: number | null };
  requestId: string;
  toolCall: ToolCallSeen | null;
  /** The response's id (Responses: what previous_response_id continues). */
  id: string;
  /** The model the answer says served it. */
  model: string;
}

export interface StreamedOutcome extends Outcome {
  /** Event types in order, as the SDK's stream helper saw them. */
  events: string[];
}

export interface FormatUnderTest {
  name: string;
  /** The format's word for each way an answer ends. */
  stops: { stop: string; length: string; filtered: string; tool: string };
  /** The first and last event types of a stream. */
  streamBounds: [first: string, last: string];
  create(model: string, prompt: string, options?: { tools?: boolean }): Promise<Outcome>;
  stream(model: string, prompt: string, options?: { tools?: boolean }): Promise<StreamedOutcome>;
  /** The tool's result for `call`, sent after the turn that asked for it (`previous`). */
  answerTool(model: string, prompt: string, previous: Outcome, result: string): Promise<Outcome>;
  /** Asserts `call` failed as the format reports an error of `status`; returns the message the caller read. */
  assertError(call: Promise<unknown>, status: number): Promise<string>;
  /** Sends a raw body with this format's key headers; for the native-only case. */
  post(body: Record<string, unknown>): Promise<Response>;
}

/** A fetch that notes the gateway's request id of the last response (the SDKs' stream helpers do not expose it). */
function notingFetch(): { fetch: typeof fetch; requestId: () => string } {
  let last = '';
  return {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      last = response.headers.get('x-request-id') ?? '';
      return response;
    },
    requestId: () => last,
  };
}

function parsed(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

export function chatCompletions(gatewayUrl: string, key: string): FormatUnderTest {
  const noted = notingFetch();
  const client = new OpenAI({ apiKey: key, baseURL: `${gatewayUrl}/v1`, maxRetries: 0, timeout: 20_000, fetch: noted.fetch });
  const tools = [{ type: 'function' as const, function: WEATHER_TOOL }];
  const outcomeOf = (completion: OpenAI.ChatCompletion, requestId: string): Outcome => {
    const choice = completion.choices[0]!;
    const call = choice.message.tool_calls?.[0];
    return {
      text: choice.message.content ?? '',
      stop: choice.finish_reason,
      usage: usageOf(completion.usage),
      requestId,
      toolCall: call?.type === 'function' ? { id: call.id, name: call.function.name, arguments: parsed(call.function.arguments) } : null,
      id: completion.id,
      model: completion.model,
    };
  };
  return {
    name: 'chat completions',
    stops: { stop: 'stop', length: 'length', filtered: 'content_filter', tool: 'tool_calls' },
    streamBounds: ['chat.completion.chunk', 'chat.completion.chunk'],
    async create(model, prompt, options = {}) {
      const data = await client.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }], ...(options.tools === true ? { tools } : {}) });
      return outcomeOf(data, noted.requestId());
    },
    async stream(model, prompt, options = {}) {
      const stream = client.chat.completions.stream({ model, messages: [{ role: 'user', content: prompt }], stream_options: { include_usage: true }, ...(options.tools === true ? { tools } : {}) });
      const events: string[] = [];
      let usage: OpenAI.CompletionUsage | undefined;
      stream.on('chunk', (chunk) => {
        events.push(chunk.object);
        if (chunk.usage) usage = chunk.usage;
      });
      const final = await stream.finalChatCompletion();
      return { ...outcomeOf({ ...final, usage }, noted.requestId()), events };
    },
    async answerTool(model, prompt, previous, result) {
      const call = previous.toolCall!;
      const data = await client.chat.completions.create({
        model,
        tools,
        messages: [
          { role: 'user', content: prompt },
          { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] },
          { role: 'tool', tool_call_id: call.id, content: result },
        ],
      });
      return outcomeOf(data, noted.requestId());
    },
    assertError: (call, status) => openaiError(call, status),
    post: (body) => fetch(`${gatewayUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };

  function usageOf(usage: OpenAI.CompletionUsage | undefined): Outcome['usage'] {
    assert.ok(usage !== undefined, 'the answer carries usage');
    return {
      input: usage.prompt_tokens,
      output: usage.completion_tokens,
      cached: usage.prompt_tokens_details?.cached_tokens ?? 0,
      reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    };
  }
}

/** The §4 error as the openai SDK raises it: 400 `invalid_body` for a request the provider refused, 502 `provider_error` for its failure. */
async function openaiError(call: Promise<unknown>, status: number): Promise<string> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof OpenAI.APIError, `an APIError, not ${String(error)}`);
    assert.equal(error.status, status);
    assert.equal(error.code, status === 400 ? 'invalid_body' : 'provider_error');
    assert.equal(error.type, status === 400 ? 'invalid_request_error' : 'api_error');
    assert.ok(typeof error.requestID === 'string' && error.requestID.length > 0, 'the request id is in x-request-id');
    return (error.error as { message?: string }).message ?? '';
  }
  assert.fail(`expected a ${status}, the call succeeded`);
}

export function responses(gatewayUrl: string, key: string): FormatUnderTest {
  const noted = notingFetch();
  const client = new OpenAI({ apiKey: key, baseURL: `${gatewayUrl}/v1`, maxRetries: 0, timeout: 20_000, fetch: noted.fetch });
  const tools = [{ type: 'function' as const, strict: false, ...WEATHER_TOOL }];
  const outcomeOf = (response: OpenAI.Responses.Response, requestId: string): Outcome => {
    const call = response.output.find((item) => item.type === 'function_call');
    assert.ok(response.usage, 'the response carries usage');
    return {
      text: response.output_text,
      stop: response.status === 'incomplete' ? `incomplete: ${response.incomplete_details?.reason}` : String(response.status),
      usage: {
        input: response.usage.input_tokens,
        output: response.usage.output_tokens,
        cached: response.usage.input_tokens_details.cached_tokens,
        reasoning: response.usage.output_tokens_details.reasoning_tokens,
      },
      requestId,
      toolCall: call === undefined ? null : { id: call.call_id, name: call.name, arguments: parsed(call.arguments) },
      id: response.id,
      model: response.model,
    };
  };
  return {
    name: 'Responses',
    stops: { stop: 'completed', length: 'incomplete: max_output_tokens', filtered: 'incomplete: content_filter', tool: 'completed' },
    streamBounds: ['response.created', 'response.completed'],
    async create(model, prompt, options = {}) {
      const data = await client.responses.create({ model, input: prompt, ...(options.tools === true ? { tools } : {}) });
      return outcomeOf(data, noted.requestId());
    },
    async stream(model, prompt, options = {}) {
      const stream = client.responses.stream({ model, input: prompt, ...(options.tools === true ? { tools } : {}) });
      const events: string[] = [];
      stream.on('event', (event) => events.push(event.type));
      const final = await stream.finalResponse();
      return { ...outcomeOf(final, noted.requestId()), events };
    },
    async answerTool(model, _prompt, previous, result) {
      const data = await client.responses.create({ model, tools, previous_response_id: previous.id, input: [{ type: 'function_call_output', call_id: previous.toolCall!.id, output: result }] });
      const outcome = outcomeOf(data, noted.requestId());
      // The stored conversation holds the turn it continued: the question, the call, its output.
      const items = await client.responses.inputItems.list(data.id, { order: 'asc' });
      assert.deepEqual(items.data.map((item) => item.type), ['message', 'function_call', 'function_call_output']);
      return outcome;
    },
    assertError: (call, status) => openaiError(call, status),
    post: (body) => fetch(`${gatewayUrl}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };
}

export function messages(gatewayUrl: string, key: string): FormatUnderTest {
  const noted = notingFetch();
  const client = new Anthropic({ apiKey: key, baseURL: gatewayUrl, maxRetries: 0, timeout: 20_000, fetch: noted.fetch });
  const tools = [{ name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters as unknown as Anthropic.Tool.InputSchema }];
  const outcomeOf = (message: Anthropic.Message, requestId: string): Outcome => {
    const call = message.content.find((block) => block.type === 'tool_use');
    const { usage } = message;
    const cached = usage.cache_read_input_tokens ?? 0;
    return {
      text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
      stop: String(message.stop_reason),
      // Anthropic's input_tokens leave out the tokens read from and written to the cache.
      usage: { input: usage.input_tokens + cached + (usage.cache_creation_input_tokens ?? 0), output: usage.output_tokens, cached, reasoning: null },
      requestId,
      toolCall: call === undefined ? null : { id: call.id, name: call.name, arguments: call.input as Record<string, unknown> },
      id: message.id,
      model: message.model,
    };
  };
  const turn = (prompt: string): Anthropic.MessageParam => ({ role: 'user', content: prompt });
  return {
    name: 'Messages',
    stops: { stop: 'end_turn', length: 'max_tokens', filtered: 'refusal', tool: 'tool_use' },
    streamBounds: ['message_start', 'message_stop'],
    async create(model, prompt, options = {}) {
      const data = await client.messages.create({ model, max_tokens: 256, messages: [turn(prompt)], ...(options.tools === true ? { tools } : {}) });
      return outcomeOf(data, noted.requestId());
    },
    async stream(model, prompt, options = {}) {
      const stream = client.messages.stream({ model, max_tokens: 256, messages: [turn(prompt)], ...(options.tools === true ? { tools } : {}) });
      const events: string[] = [];
      stream.on('streamEvent', (event) => events.push(event.type));
      const final = await stream.finalMessage();
      return { ...outcomeOf(final, noted.requestId()), events };
    },
    async answerTool(model, prompt, previous, result) {
      const call = previous.toolCall!;
      const data = await client.messages.create({
        model,
        max_tokens: 256,
        tools,
        messages: [
          turn(prompt),
          { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: call.name, input: call.arguments }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] },
        ],
      });
      return outcomeOf(data, noted.requestId());
    },
    async assertError(call, status) {
      try {
        await call;
      } catch (error) {
        assert.ok(error instanceof Anthropic.APIError, `an APIError, not ${String(error)}`);
        assert.equal(error.status, status);
        const body = error.error as { type?: string; error?: { type?: string; message?: string } };
        assert.equal(body.type, 'error');
        assert.equal(body.error?.type, status === 400 ? 'invalid_request_error' : 'api_error');
        assert.ok(error.requestID !== null && error.requestID !== undefined, 'the request id is in request-id');
        return body.error?.message ?? '';
      }
      assert.fail(`expected a ${status}, the call succeeded`);
    },
    post: (body) => fetch(`${gatewayUrl}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };
}


/** The Gemini API through @google/genai: its base URL at the gateway, the gateway key as its API key. */
export function geminiApi(gatewayUrl: string, key: string): FormatUnderTest {
  const client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gatewayUrl, retryOptions: { attempts: 1 } } });
  const config = (tools: boolean | undefined) => (tools === true ? { tools: [{ functionDeclarations: [{ name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, parametersJsonSchema: WEATHER_TOOL.parameters }] }] } : {});
  const usageOf = (response: GenerateContentResponse | undefined): Outcome['usage'] => {
    const metadata = response?.usageMetadata;
    assert.ok(metadata !== undefined, 'the answer carries usageMetadata');
    const thoughts = metadata.thoughtsTokenCount ?? 0;
    return { input: metadata.promptTokenCount ?? 0, output: (metadata.candidatesTokenCount ?? 0) + thoughts, cached: metadata.cachedContentTokenCount ?? 0, reasoning: thoughts };
  };
  const toolCallOf = (response: GenerateContentResponse): ToolCallSeen | null => {
    const call = response.functionCalls?.[0];
    return call === undefined ? null : { id: call.id ?? '', name: call.name ?? '', arguments: (call.args ?? {}) as Record<string, unknown> };
  };
  const outcomeOf = (response: GenerateContentResponse): Outcome => ({
    text: response.text ?? '',
    stop: response.candidates?.[0]?.finishReason ?? '',
    usage: usageOf(response),
    requestId: response.sdkHttpResponse?.headers?.['x-request-id'] ?? '',
    toolCall: toolCallOf(response),
    id: response.responseId ?? '',
    model: response.modelVersion ?? '',
  });
  const turn = (model: string, contents: Content[] | string, tools?: boolean) => client.models.generateContent({ model, contents, config: config(tools) });
  return {
    name: 'Gemini API',
    stops: { stop: 'STOP', length: 'MAX_TOKENS', filtered: 'SAFETY', tool: 'STOP' },
    streamBounds: ['GenerateContentResponse', 'GenerateContentResponse'],
    create: async (model, prompt, options = {}) => outcomeOf(await turn(model, prompt, options.tools)),
    async stream(model, prompt, options = {}) {
      const events: string[] = [];
      let text = '';
      let stop = '';
      let last: GenerateContentResponse | undefined;
      let withUsage: GenerateContentResponse | undefined;
      let toolCall: ToolCallSeen | null = null;
      for await (const chunk of await client.models.generateContentStream({ model, contents: prompt, config: config(options.tools) })) {
        events.push('GenerateContentResponse');
        text += chunk.text ?? '';
        stop = chunk.candidates?.[0]?.finishReason ?? stop;
        toolCall = toolCallOf(chunk) ?? toolCall;
        if (chunk.usageMetadata !== undefined) withUsage = chunk;
        last = chunk;
      }
      return { text, stop, usage: usageOf(withUsage), requestId: last?.sdkHttpResponse?.headers?.['x-request-id'] ?? '', toolCall, id: last?.responseId ?? '', model: last?.modelVersion ?? '', events };
    },
    async answerTool(model, prompt, previous, result) {
      const call = previous.toolCall!;
      const id = call.id === '' ? {} : { id: call.id };
      const contents: Content[] = [
        { role: 'user', parts: [{ text: prompt }] },
        { role: 'model', parts: [{ functionCall: { ...id, name: call.name, args: call.arguments } }] },
        { role: 'user', parts: [{ functionResponse: { ...id, name: call.name, response: parsed(result) } }] },
      ];
      return outcomeOf(await turn(model, contents, true));
    },
    async assertError(call, status) {
      try {
        await call;
      } catch (error) {
        assert.ok(error instanceof ApiError, `an ApiError, not ${String(error)}`);
        assert.equal(error.status, status);
        const body = JSON.parse(error.message) as { error?: { code?: number; status?: string; message?: string } };
        assert.equal(body.error?.code, status);
        assert.equal(body.error?.status, status === 400 ? 'INVALID_ARGUMENT' : 'UNAVAILABLE');
        return body.error?.message ?? '';
      }
      assert.fail(`expected a ${status}, the call succeeded`);
    },
    post: ({ model, ...body }) =>
      fetch(`${gatewayUrl}/v1beta/models/${String(model)}:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  };
}

export interface FormatDescriptor {
  name: string;
  /** The providers that speak the format themselves: their requests go there as sent. */
  native: readonly string[];
  /** A request with something only those providers can do (a tool only they run), and the param the 400 names for the others. */
  nativeOnly: { body: Record<string, unknown>; param: string };
  /**
   * For the native case: a field the gateway does not know that the native provider takes, and
   * where the provider's request has it (default: an invented top-level field).
   */
  unknownField?: { body: Record<string, unknown>; read(body: Record<string, unknown>): unknown; value: unknown };
  /** A request with a field that only tunes how the format's own vendor serves it: dropped and named for the others (`param`). */
  servingHint: { body: Record<string, unknown>; param: string };
  make(gatewayUrl: string, key: string): FormatUnderTest;
}

export const FORMATS: FormatDescriptor[] = [
  {
    name: 'chat completions',
    native: ['OpenAI', 'an OpenAI-compatible server', 'Azure OpenAI'],
    nativeOnly: { body: { messages: [{ role: 'user', content: 'Hi' }], logprobs: true }, param: 'logprobs' },
    servingHint: { body: { messages: [{ role: 'user', content: 'Hi' }], service_tier: 'default' }, param: 'service_tier' },
    make: chatCompletions,
  },
  {
    name: 'Responses',
    native: ['OpenAI', 'Azure OpenAI'],
    nativeOnly: { body: { input: 'Plot this.', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, param: 'tools[0].type' },
    servingHint: { body: { input: 'Hi', prompt_cache_key: 'conversation-1', client_metadata: { 'x-codex-installation-id': 'i-1' } }, param: 'prompt_cache_key,client_metadata' },
    make: responses,
  },
  {
    name: 'Messages',
    native: ['Anthropic'],
    nativeOnly: { body: { max_tokens: 2048, tools: [{ type: 'code_execution_20250825', name: 'code_execution' }], messages: [{ role: 'user', content: 'Run it.' }] }, param: 'tools[0].type' },
    servingHint: { body: { max_tokens: 256, context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] }, messages: [{ role: 'user', content: 'Hi' }] }, param: 'context_management' },
    make: messages,
  },
  {
    name: 'Gemini API',
    native: ['Gemini', 'Google Vertex AI (Gemini)'],
    nativeOnly: { body: { contents: [{ role: 'user', parts: [{ text: 'Run it.' }] }], tools: [{ codeExecution: {} }] }, param: 'tools[0].codeExecution' },
    servingHint: { body: { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] }, param: 'safetySettings' },
    // Google refuses names it does not know: the probe is a generationConfig member the gateway does not read.
    unknownField: {
      body: { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], generationConfig: { mediaResolution: 'MEDIA_RESOLUTION_LOW' } },
      read: (body) => (body.generationConfig as Record<string, unknown> | undefined)?.mediaResolution,
      value: 'MEDIA_RESOLUTION_LOW',
    },
    make: geminiApi,
  },
];
