/**
 * The providers of the format conformance suite (test/formats-conformance.test.ts): each
 * vendor's fake scripted through one neutral shape, answering in the vendor's own wire format.
 */
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type AnthropicErrorType } from '../fakes/anthropic.js';
import { candidateResponse, FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from '../fakes/gemini.js';
import { geminiConformanceFake } from '../fakes/gemini-conformance.js';
import { startFakeVertex, vertexEnv } from '../fakes/vertex.js';
import { startOpenAIFake } from '../fakes/openai.js';
import { FAKE_AWS, startFakeBedrock } from '../fakes/bedrock.js';
import { AZURE_KEY, startFakeAzure } from '../fakes/azure.js';
import { MISTRAL_KEY, startFakeMistral } from '../fakes/mistral.js';
import type { RecordedRequest } from '../fakes/fake-server.js';
import type { ScriptedUsage } from '../providers/conformance.js';
import type { TestGatewayOptions } from './gateway.js';

/**
 * Token counts in OpenAI's sense: `input` holds the cached tokens, `output` the reasoning
 * tokens. Each fake writes them in its vendor's words.
 */
export interface NeutralUsage {
  input: number;
  output: number;
  cached: number;
  reasoning: number;
}

export type VendorAnswer =
  /** Text in pieces; `length`: cut by the output limit; `filtered`: stopped by the vendor's content filter. */
  | { kind: 'text'; pieces: string[]; finish: 'stop' | 'length' | 'filtered'; usage: NeutralUsage }
  /** One function call, with the id the vendor gives it, after the text of `preface` if any. */
  | { kind: 'tool-call'; id: string; name: string; arguments: Record<string, unknown>; preface?: string; usage: NeutralUsage };

export interface RunningVendor {
  gateway: TestGatewayOptions;
  /** What the vendor answers the next calls with (until scripted again). */
  answer(answer: VendorAnswer): void;
  /** The next call fails (later ones may too) with the vendor's own error body of this status. */
  fail(status: 400 | 500, message: string): void;
  /** How many requests the vendor received. */
  received(): number;
  /** The body of the vendor's last model request, as it arrived. */
  lastBody(): Loose;
  /** How the vendor's last request named the call its tool result answers (an id, or Gemini's function name). */
  lastToolResultRef(): string | undefined;
  close(): Promise<void>;
}

export interface Vendor {
  name: string;
  model: string;
  /** Whether the vendor reports reasoning tokens apart (Anthropic counts them in the output only). */
  reportsReasoning: boolean;
  /** Whether the vendor names tool calls by an id (Gemini by function name: the gateway makes the ids). */
  toolCallIds: boolean;
  start(): Promise<RunningVendor>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- request bodies are read loosely; the tests assert what they read
type Loose = any;

function openaiUsage(usage: NeutralUsage): ScriptedUsage {
  return { promptTokens: usage.input, completionTokens: usage.output, cachedTokens: usage.cached, reasoningTokens: usage.reasoning };
}

/** The id a chat request's tool message answers, or a Responses request's function_call_output. */
function openaiToolResultRef(request: RecordedRequest | undefined): string | undefined {
  const body: Loose = request?.json ?? {};
  if (Array.isArray(body.messages)) return body.messages.find((message: Loose) => message.role === 'tool')?.tool_call_id;
  if (Array.isArray(body.input)) return body.input.find((item: Loose) => item.type === 'function_call_output')?.call_id;
  return undefined;
}

/** An OpenAI-shaped vendor: the OpenAI fake, perhaps behind another host's front (Azure's URLs and headers). */
async function startOpenAIVendor(
  gateway: (url: string) => TestGatewayOptions,
  front?: () => Promise<{ openai: Awaited<ReturnType<typeof startOpenAIFake>>; server: { url: string }; close(): Promise<void> }>,
): Promise<RunningVendor> {
  const fronted = front === undefined ? undefined : await front();
  const fake = fronted?.openai ?? (await startOpenAIFake());
  const modelCalls = () => fake.server.requests.filter((request) => /\/v1\/(chat\/completions|responses)$/.test(request.path));
  return {
    gateway: gateway(fronted?.server.url ?? fake.server.url),
    answer(answer) {
      const usage = openaiUsage(answer.usage);
      if (answer.kind === 'text' && answer.finish === 'stop') {
        fake.scriptChat({ kind: 'stream', deltas: answer.pieces, usage });
        fake.scriptResponses({ kind: 'text', deltas: answer.pieces, usage });
      } else if (answer.kind === 'text') {
        const length = answer.finish === 'length';
        fake.scriptChat({ kind: 'cut', finishReason: length ? 'length' : 'content_filter', deltas: answer.pieces, usage });
        fake.scriptResponses({ kind: 'text', deltas: answer.pieces, usage, incomplete: length ? 'max_output_tokens' : 'content_filter' });
      } else {
        const args = JSON.stringify(answer.arguments);
        const preface = answer.preface === undefined ? {} : { preface: answer.preface };
        fake.scriptChat({ kind: 'tool-call', id: answer.id, name: answer.name, arguments: args, usage, ...preface });
        fake.scriptResponses({ kind: 'function-call', callId: answer.id, name: answer.name, arguments: args, usage, ...preface });
      }
    },
    fail(status, message) {
      fake.scriptChat({ kind: 'error', status, message });
      fake.failNext('/v1/responses', status, message);
    },
    received: () => fake.server.requests.length,
    lastBody: () => modelCalls().at(-1)?.json,
    lastToolResultRef: () => openaiToolResultRef(modelCalls().at(-1)),
    close: () => (fronted ?? fake).close(),
  };
}

const ANTHROPIC_ERRORS: Record<400 | 500, AnthropicErrorType> = { 400: 'invalid_request_error', 500: 'api_error' };

const ANTHROPIC_STOP = { stop: 'end_turn', length: 'max_tokens', filtered: 'refusal' } as const;

const GEMINI_FINISH = { stop: 'STOP', length: 'MAX_TOKENS', filtered: 'SAFETY' } as const;

const CONVERSE_STOP = { stop: 'end_turn', length: 'max_tokens', filtered: 'content_filtered' } as const;

/** A Gemini fake through the suite's neutral shape: Gemini counts thinking apart from the candidates, the cached tokens within the prompt. */
function geminiViews(fake: FakeGemini): Omit<RunningVendor, 'gateway' | 'close'> {
  return {
    answer(answer) {
      const { input, output, cached, reasoning } = answer.usage;
      const usage = { promptTokens: input, completionTokens: output - reasoning, cachedTokens: cached, thoughtsTokens: reasoning };
      const parts =
        answer.kind === 'text'
          ? [{ text: answer.pieces.join('') }]
          : [...(answer.preface === undefined ? [] : [{ text: answer.preface }]), { functionCall: { name: answer.name, args: answer.arguments } }];
      fake.reply('chat', { response: candidateResponse(parts, { finishReason: answer.kind === 'text' ? GEMINI_FINISH[answer.finish] : 'STOP', usage }) });
    },
    fail: (status, message) => fake.reply('chat', { error: status, message }),
    received: () => fake.requests.length,
    lastBody: () => fake.requests.at(-1)?.json,
    lastToolResultRef() {
      const contents: Loose[] = fake.requests.at(-1)?.json?.contents ?? [];
      return contents.flatMap((content) => content.parts ?? []).find((part: Loose) => part.functionResponse !== undefined)?.functionResponse.name;
    },
  };
}

export const VENDORS: Vendor[] = [
  {
    name: 'OpenAI',
    model: 'gpt-4o-mini',
    reportsReasoning: true,
    toolCallIds: true,
    start: () => startOpenAIVendor((url) => ({ env: { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' } })),
  },
  {
    name: 'an OpenAI-compatible server',
    model: 'llama3.2',
    reportsReasoning: true,
    toolCallIds: true,
    start: () =>
      startOpenAIVendor((url) => ({ configFile: { providers: { compatible: [{ name: 'ollama', baseUrl: `${url}/v1`, models: [{ id: 'llama3.2', upstreamId: 'llama3.2:3b' }] }] } } })),
  },
  {
    name: 'Azure OpenAI',
    model: 'azure/chat-prod',
    reportsReasoning: true,
    toolCallIds: true,
    start: () =>
      startOpenAIVendor(
        (url) => ({ env: { AZURE_OPENAI_ENDPOINT: url, AZURE_OPENAI_API_KEY: AZURE_KEY }, configFile: { providers: { azure: { deployments: [{ name: 'chat-prod', model: 'gpt-4o' }] } } } }),
        () => startFakeAzure({ apiVersion: 'v1', deployments: { 'chat-prod': 'gpt-4o' }, auth: 'api-key' }),
      ),
  },
  {
    name: 'Mistral',
    model: 'mistral-large-latest',
    reportsReasoning: true,
    toolCallIds: true,
    start: () => startOpenAIVendor((url) => ({ env: { MISTRAL_API_KEY: MISTRAL_KEY, MISTRAL_BASE_URL: `${url}/v1` } }), startFakeMistral),
  },
  {
    name: 'Anthropic',
    model: 'claude-sonnet-4-5',
    reportsReasoning: false,
    toolCallIds: true,
    async start() {
      const fake = await startFakeAnthropic();
      return {
        gateway: { env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY } },
        answer(answer) {
          // Anthropic's input_tokens are those neither read from nor written to the cache.
          const usage = { input_tokens: answer.usage.input - answer.usage.cached, cache_read_input_tokens: answer.usage.cached, output_tokens: answer.usage.output };
          if (answer.kind === 'text') {
            fake.reply({ message: { content: [{ type: 'text', text: answer.pieces.join('') }], stop_reason: ANTHROPIC_STOP[answer.finish], usage } });
          } else {
            const preface = answer.preface === undefined ? [] : [{ type: 'text' as const, text: answer.preface }];
            fake.reply({ message: { content: [...preface, { type: 'tool_use', id: answer.id, name: answer.name, input: answer.arguments }], stop_reason: 'tool_use', usage } });
          }
        },
        fail: (status, message) => fake.reply({ error: ANTHROPIC_ERRORS[status], message }),
        received: () => fake.requests.length,
        lastBody: () => fake.lastBody(),
        lastToolResultRef() {
          const messages: Loose[] = fake.lastBody()?.messages ?? [];
          const blocks = messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []));
          return blocks.find((block) => block.type === 'tool_result')?.tool_use_id;
        },
        close: () => fake.close(),
      };
    },
  },
  {
    name: 'AWS Bedrock (Converse)',
    model: 'bedrock/amazon.nova-pro-v1:0',
    reportsReasoning: false,
    toolCallIds: true,
    async start() {
      const fake = await startFakeBedrock();
      return {
        gateway: { env: { AWS_REGION: FAKE_AWS.region, AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId, AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey, BEDROCK_BASE_URL: fake.server.url } },
        answer(answer) {
          // Converse's inputTokens are those not read from the cache.
          const usage = { inputTokens: answer.usage.input - answer.usage.cached, cacheReadInputTokens: answer.usage.cached, outputTokens: answer.usage.output };
          if (answer.kind === 'text') {
            fake.answerConverse({ content: [{ text: answer.pieces.join(''), pieces: answer.pieces }], stopReason: CONVERSE_STOP[answer.finish], usage });
          } else {
            const preface = answer.preface === undefined ? [] : [{ text: answer.preface }];
            fake.answerConverse({ content: [...preface, { toolUse: { toolUseId: answer.id, name: answer.name, input: answer.arguments } }], stopReason: 'tool_use', usage });
          }
        },
        fail: (status, message) => fake.scriptChat({ kind: 'error', status, message }),
        received: () => fake.server.requests.length,
        lastBody: () => fake.server.requests.at(-1)?.json,
        lastToolResultRef() {
          const messages: Loose[] = fake.server.requests.at(-1)?.json?.messages ?? [];
          const blocks = messages.flatMap((message) => message.content ?? []);
          return blocks.find((block: Loose) => block.toolResult !== undefined)?.toolResult.toolUseId;
        },
        close: () => fake.close(),
      };
    },
  },
  {
    name: 'Gemini',
    model: 'gemini-2.5-flash',
    reportsReasoning: true,
    toolCallIds: false,
    async start() {
      const fake = await startFakeGemini();
      return { ...geminiViews(fake), gateway: { env: { GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: FAKE_GEMINI_KEY } }, close: () => fake.close() };
    },
  },
  {
    name: 'Google Vertex AI (Gemini)',
    model: 'vertex/gemini-2.5-flash',
    reportsReasoning: true,
    toolCallIds: false,
    async start() {
      // Vertex's front (its token exchange and URLs) over Gemini's own API.
      const fake = await startFakeGemini();
      const vertex = await startFakeVertex('google', geminiConformanceFake(fake));
      return { ...geminiViews(fake), gateway: { env: vertexEnv(vertex) }, close: () => vertex.close() };
    },
  },
];
