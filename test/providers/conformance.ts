/**
 * The one conformance suite every provider adapter runs (like hono's common.case.test.ts):
 * a REAL gateway pointed at the adapter's fake upstream, driven by the official `openai` SDK.
 * An adapter's test file calls `runProviderConformance` with its fake; a case the adapter
 * cannot do is skipped with a reason (`skip`). Keeping this suite green is the "adding a
 * provider" checklist of docs/providers.md.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import type { FakeServer } from '../fakes/fake-server.js';
import { loggedRecord, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { RecordTap } from '../helpers/records.js';
import { ROUTE_MODULES } from '../../src/server/routes/index.js';

/** Token counts a fake reports for a scripted answer. */
export interface ScriptedUsage {
  promptTokens: number;
  completionTokens: number;
  /** Of promptTokens, those read from the vendor's prompt cache (OpenAI fakes; 0 when unset). */
  cachedTokens?: number;
  /** Of completionTokens, those the model spent reasoning (OpenAI fakes; 0 when unset). */
  reasoningTokens?: number;
}

/**
 * What the fake answers to the next chat calls (until scripted again), in the vendor's own
 * documented wire format. Every fake implements every kind.
 */
export type ChatScript =
  /** A complete (non-streamed) answer; a streamed request gets the same text as one delta. */
  | { kind: 'reply'; text: string; usage: ScriptedUsage }
  /** A stream of text deltas, then usage and the vendor's end-of-stream marker. */
  | { kind: 'stream'; deltas: string[]; usage: ScriptedUsage }
  /** The vendor's documented error body with this HTTP status. */
  | { kind: 'error'; status: 400 | 401 | 404 | 429 | 500; message: string }
  /** Sends no response headers for `delayMs` (timeout tests). */
  | { kind: 'delay-headers'; delayMs: number }
  /** Streams the deltas, then ends the connection without the end-of-stream marker. */
  | { kind: 'stream-truncated'; deltas: string[] }
  /** Streams the deltas, then the vendor's in-stream error event (inside the HTTP 200). */
  | { kind: 'stream-error-event'; deltas: string[]; message: string }
  /** Streams the deltas, then stays silent; `onClose` runs when the connection closes. */
  | { kind: 'stream-hang'; deltas: string[]; onClose: () => void };

/** A vendor-neutral view of one chat request the fake received. */
export interface UpstreamChatView {
  /** The credential the fake received (Authorization bearer, x-api-key, x-goog-api-key, …). */
  credential: string | undefined;
  /** Every text of the conversation, joined with newlines. */
  text: string;
  images: { mimeType: string; base64: string }[];
  /** Remote image URLs passed on as URLs. */
  imageUrls: string[];
  files: { mimeType: string; base64: string }[];
  streamed: boolean;
}

export interface ConformanceFake {
  readonly server: FakeServer;
  scriptChat(script: ChatScript): void;
  /** The chat requests received so far, oldest first. */
  chatRequests(): UpstreamChatView[];
  close(): Promise<void>;
}

export type ConformanceCase =
  | 'chat'
  | 'stream'
  | 'stream-usage'
  | 'image-data-uri'
  | 'image-remote-url'
  | 'pdf-file'
  | 'error-401'
  | 'error-400'
  | 'error-404'
  | 'error-429'
  | 'error-500'
  | 'error-before-first-frame'
  | 'abort'
  | 'timeout'
  | 'stream-idle-timeout'
  | 'truncated-stream'
  | 'stream-error-event'
  | Capability;

/** The capabilities besides chat a provider may offer (src/model-api/types.ts). */
export const CAPABILITIES = ['embeddings', 'images', 'speech', 'transcription'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export interface ProviderConformanceOptions {
  /** Provider name as in the catalog (`openai`, `gemini`, a compatible provider's name). */
  name: string;
  startFake(): Promise<ConformanceFake>;
  /** Environment and/or config file pointing the gateway at the fake (base URL, key, models). */
  gateway(fakeUrl: string): { env?: Record<string, string>; configFile?: Record<string, unknown> };
  /** A chat model (id or alias) served by this provider. */
  chatModel: string;
  /** The credential configured for the provider: it, never the client's key, must reach the fake. */
  upstreamKey: string;
  /** Whether the adapter passes remote image URLs on (Provider.acceptsRemoteImageUrls). */
  acceptsRemoteImageUrls: boolean;
  /** The provider's own id of a call as the fake sends it (a response header, or Gemini's `responseId`). */
  providerRequestId: RegExp;
  /** Whether the vendor's error responses name the call too (Gemini's carry no id). */
  providerRequestIdOnError: boolean;
  /** Whether the vendor takes the gateway's request id (`X-Client-Request-Id`); the others get no header they do not document. */
  takesClientRequestId: boolean;
  /** The vendor's own message for a model it does not serve (its 404 body carries it). */
  notFoundMessage: string;
  /**
   * A model of each capability besides chat that the adapter offers (as the catalog or the
   * gateway's config declares it); a capability without one needs its reason in `skip`.
   */
  capabilityModels: Partial<Record<Capability, string>>;
  /** Cases the adapter cannot do, each with the reason. */
  skip?: Partial<Record<ConformanceCase, string>>;
}

/** A 1×1 transparent PNG. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
/** A minimal PDF document. */
export const PDF_BASE64 = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n').toString('base64');

const USAGE: ScriptedUsage = { promptTokens: 11, completionTokens: 7 };
/** Short enough to test timeouts, long enough that a loaded machine's connect and first answer fit (they count too). */
const SHORT_TIMEOUT_MS = 1_000;

export interface SseResult {
  status: number;
  headers: Headers;
  /** `data:` payloads in order (`[DONE]` included). */
  data: string[];
  raw: string;
}

/** Posts a streaming chat request with fetch and collects the raw SSE frames. */
export async function postRawStream(gatewayUrl: string, key: string, body: Record<string, unknown>): Promise<SseResult> {
  const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const raw = await response.text();
  const data = raw
    .split('\n\n')
    .filter((frame) => frame.length > 0)
    .map((frame) => {
      assert.ok(frame.startsWith('data: '), `every frame is "data: …", got ${JSON.stringify(frame)}`);
      return frame.slice('data: '.length);
    });
  return { status: response.status, headers: response.headers, data, raw };
}

/**
 * The official SDK pointed at the gateway. With `agent`, its requests go through undici's own
 * fetch on that agent: destroy it after the suite so no client connection outlives it (after
 * an aborted stream, Node's built-in fetch can leave a fresh idle connection that holds up the
 * gateway's graceful close).
 */
export function openaiClient(gatewayUrl: string, key: string, agent?: Agent): OpenAI {
  if (agent === undefined) return new OpenAI({ apiKey: key, baseURL: `${gatewayUrl}/v1`, maxRetries: 0, timeout: 20_000 });
  const fetch = (input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent }) as unknown as Promise<Response>;
  return new OpenAI({ apiKey: key, baseURL: `${gatewayUrl}/v1`, maxRetries: 0, timeout: 20_000, fetch });
}

/** Asserts an SDK call failed with the documented error of `status`/`code`, and returns the error. */
export async function rejectsWith(call: Promise<unknown>, status: number, code: string): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof OpenAI.APIError, `expected an APIError, got ${String(error)}`);
    assert.equal(error.status, status, `status of ${JSON.stringify(error.error)}`);
    assert.equal(error.code, code);
    return error;
  }
  assert.fail(`expected ${status} ${code}, the call succeeded`);
}

/**
 * An error body as JSON text without its `request_id`: the id is random hex, so a check that
 * some text ("401", a number from the provider's message) never reaches the caller would
 * otherwise fail whenever the id happens to contain it.
 */
export function errorTextWithoutId(error: InstanceType<typeof OpenAI.APIError>): string {
  return JSON.stringify({ ...(error.error as object), request_id: undefined });
}

function messages(text: string) {
  return [
    { role: 'system' as const, content: 'You are terse.' },
    { role: 'user' as const, content: text },
  ];
}

/** Registers the conformance tests of one provider adapter. */
export function runProviderConformance(options: ProviderConformanceOptions): void {
  const skipped = (name: ConformanceCase) => options.skip?.[name] ?? false;
  const model = options.chatModel;

  describe(`${options.name} adapter conformance`, () => {
    let fake: ConformanceFake;
    let gateway: TestGateway;
    let client: OpenAI;
    let key: string;
    const records = new RecordTap();
    const clientAgent = new Agent();

    before(async () => {
      fake = await options.startFake();
      gateway = await startTestGateway({ ...options.gateway(fake.server.url), routes: [...ROUTE_MODULES, records.routes] });
      key = await gateway.createKey({ scopes: ['model:request'] });
      client = openaiClient(gateway.url, key, clientAgent);
    });
    after(async () => {
      await clientAgent.destroy();
      await gateway?.close();
      await fake?.close();
    });

    const lastUpstream = () => {
      const all = fake.chatRequests();
      assert.ok(all.length > 0, 'the fake received a chat request');
      return all[all.length - 1]!;
    };

    /** One user message of a text part then `part`; the completion with its HTTP response. */
    const askWithPart = (text: string, part: OpenAI.ChatCompletionContentPart) =>
      client.chat.completions.create({ model, messages: [{ role: 'user', content: [{ type: 'text', text }, part] }] }).withResponse();

    test('plain chat: answer, usage, model as requested, the configured credential upstream', { skip: skipped('chat') }, async () => {
      fake.scriptChat({ kind: 'reply', text: 'Hello there.', usage: USAGE });
      const { data: completion, response } = await client.chat.completions
        .create({ model, messages: messages('Say hello'), max_tokens: 50 })
        .withResponse();
      assert.equal(completion.object, 'chat.completion');
      assert.equal(completion.model, model);
      assert.equal(completion.choices[0]?.message.role, 'assistant');
      assert.equal(completion.choices[0]?.message.content, 'Hello there.');
      assert.equal(completion.choices[0]?.finish_reason, 'stop');
      assert.equal(completion.usage?.prompt_tokens, USAGE.promptTokens);
      assert.equal(completion.usage?.completion_tokens, USAGE.completionTokens);
      assert.equal(completion.usage?.total_tokens, USAGE.promptTokens + USAGE.completionTokens);

      const upstream = lastUpstream();
      assert.equal(upstream.credential, options.upstreamKey);
      assert.ok(upstream.text.includes('Say hello') && upstream.text.includes('You are terse.'));
      assert.equal(upstream.streamed, false);
      for (const request of fake.server.requests) assert.ok(!JSON.stringify(request.headers).includes('sk-mg-'), 'the client key never goes upstream');

      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.mode, 'chat');
      assert.equal(record.requestedModel, model);
      assert.equal(record.provider, options.name);
      assert.equal(record.streaming, false);
      assert.equal(record.usage?.promptTokens, USAGE.promptTokens);
      assert.equal(record.usage?.completionTokens, USAGE.completionTokens);
      assert.equal(record.errorCode, null);
    });

    test('stream: chat.completion.chunk frames, model as requested, ends with [DONE]', { skip: skipped('stream') }, async () => {
      fake.scriptChat({ kind: 'stream', deltas: ['Hel', 'lo', ' there.'], usage: USAGE });
      const result = await postRawStream(gateway.url, key, { model, messages: messages('Say hello') });
      assert.equal(result.status, 200);
      assert.match(result.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(result.data.at(-1), '[DONE]');
      const chunks = result.data.slice(0, -1).map((data) => JSON.parse(data));
      let text = '';
      for (const chunk of chunks) {
        assert.equal(chunk.object, 'chat.completion.chunk');
        assert.equal(chunk.model, model);
        assert.equal(chunk.usage ?? null, null, 'no usage chunk when the client did not ask for it');
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      assert.equal(text, 'Hello there.');
      assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
      assert.equal(lastUpstream().streamed, true);

      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.streaming, true);
      assert.equal(record.usage?.promptTokens, USAGE.promptTokens, 'usage captured although the client did not ask');
      assert.equal(record.usage?.completionTokens, USAGE.completionTokens);
    });

    test('stream with include_usage: the SDK reads the usage chunk (choices: [])', { skip: skipped('stream-usage') }, async () => {
      fake.scriptChat({ kind: 'stream', deltas: ['One', ' two'], usage: USAGE });
      const { data: stream, response } = await client.chat.completions
        .create({ model, messages: messages('Count'), stream: true, stream_options: { include_usage: true } })
        .withResponse();
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        assert.equal(chunk.model, model);
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) {
          assert.deepEqual(chunk.choices, [], 'the usage chunk has no choices');
          usage = chunk.usage;
        }
      }
      assert.equal(text, 'One two');
      assert.equal(usage?.prompt_tokens, USAGE.promptTokens);
      assert.equal(usage?.completion_tokens, USAGE.completionTokens);
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.usage?.totalTokens, USAGE.promptTokens + USAGE.completionTokens);
    });

    test('multimodal: a data-URI image reaches the provider as image data', { skip: skipped('image-data-uri') }, async () => {
      fake.scriptChat({ kind: 'reply', text: 'A pixel.', usage: USAGE });
      const { response } = await askWithPart('What is this?', { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } });
      const upstream = lastUpstream();
      assert.ok(upstream.text.includes('What is this?'));
      assert.deepEqual(upstream.images, [{ mimeType: 'image/png', base64: PNG_BASE64 }]);
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.media?.images, 1);
      assert.ok(record.media?.mimeTypes.includes('image/png'));
      assert.ok((record.media?.bytes ?? 0) > 0);
    });

    test('multimodal: remote image URLs follow acceptsRemoteImageUrls; embedded credentials are refused', { skip: skipped('image-remote-url') }, async () => {
      fake.scriptChat({ kind: 'reply', text: 'A cat.', usage: USAGE });
      const before = fake.chatRequests().length;
      const ask = (url: string) => askWithPart('Describe', { type: 'image_url', image_url: { url } });
      const withCredentials = await rejectsWith(ask('https://user:secret@images.example/cat.png'), 400, 'invalid_image_url');
      assert.ok(!withCredentials.message.includes('secret'), 'the refused URL password is not echoed');
      if (options.acceptsRemoteImageUrls) {
        await ask('https://images.example/cat.png');
        assert.deepEqual(lastUpstream().imageUrls, ['https://images.example/cat.png']);
      } else {
        await rejectsWith(ask('https://images.example/cat.png'), 400, 'invalid_image_url');
        assert.equal(fake.chatRequests().length, before, 'a refused request never reaches the provider');
      }
    });

    test('multimodal: a PDF file part (base64 data URI) reaches the provider as file data', { skip: skipped('pdf-file') }, async () => {
      fake.scriptChat({ kind: 'reply', text: 'An empty PDF.', usage: USAGE });
      const { response } = await askWithPart('Summarise the file', {
        type: 'file',
        file: { filename: 'doc.pdf', file_data: `data:application/pdf;base64,${PDF_BASE64}` },
      });
      assert.deepEqual(lastUpstream().files, [{ mimeType: 'application/pdf', base64: PDF_BASE64 }]);
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.media?.files, 1);
      assert.ok(record.media?.mimeTypes.includes('application/pdf'));
    });

    test('upstream 401 → provider-neutral 502 provider_error; the status is kept for the log only', { skip: skipped('error-401') }, async () => {
      fake.scriptChat({ kind: 'error', status: 401, message: 'Incorrect API key provided: upstream-credential-xyz.' });
      const error = await rejectsWith(client.chat.completions.create({ model, messages: messages('Hi') }), 502, 'provider_error');
      assert.equal(error.type, 'api_error');
      const body = errorTextWithoutId(error);
      for (const leak of ['401', 'Incorrect API key', 'upstream-credential-xyz', options.upstreamKey]) {
        assert.ok(!body.includes(leak), `the caller does not see ${leak}: ${body}`);
      }
      const record = await records.wait(error.requestID!);
      assert.equal(record.errorCode, 'provider_error');
      assert.equal(record.logDetail?.upstreamStatus, 401);
    });

    test('upstream 400 → 400 invalid_body with the provider\'s reason', { skip: skipped('error-400') }, async () => {
      fake.scriptChat({ kind: 'error', status: 400, message: 'max_tokens is too large for this model.' });
      const error = await rejectsWith(client.chat.completions.create({ model, messages: messages('Hi') }), 400, 'invalid_body');
      assert.match(error.message, /max_tokens is too large/);
      assert.equal(error.type, 'invalid_request_error');
    });

    test('upstream 404 (unknown upstream model, wrong base URL) → 502 provider_error that does not blame the caller; no retry', { skip: skipped('error-404') }, async () => {
      fake.scriptChat({ kind: 'error', status: 404, message: options.notFoundMessage });
      for (const stream of [false, true]) {
        const error = await rejectsWith(client.chat.completions.create({ model, messages: messages('Hi'), stream }), 502, 'provider_error');
        assert.equal(error.type, 'api_error');
        assert.equal(error.headers?.get('x-should-retry'), 'false');
        assert.doesNotMatch(error.message, /rejected the request/);
        const record = await records.wait(error.requestID!);
        assert.equal(record.errorCode, 'provider_error');
        assert.equal(record.logDetail?.upstreamStatus, 404);
        assert.equal(record.logDetail?.upstreamMessage, options.notFoundMessage);
      }
    });

    test('the provider\'s own id of each call is in the log record; the gateway\'s id goes upstream where the vendor takes one', { skip: skipped('chat') }, async () => {
      for (const stream of [false, true]) {
        fake.scriptChat({ kind: 'reply', text: 'Hello there.', usage: USAGE });
        const { data, response } = await client.chat.completions.create({ model, messages: messages('Hi'), stream }).withResponse();
        if (Symbol.asyncIterator in data) for await (const chunk of data) assert.ok(chunk.object === 'chat.completion.chunk');
        const requestId = response.headers.get('x-request-id')!;
        const upstream = fake.server.requests.at(-1)!;
        assert.equal(upstream.headers['x-client-request-id'], options.takesClientRequestId ? requestId : undefined);
        assert.match(String((await loggedRecord(gateway, requestId)).provider_request_id), options.providerRequestId);
      }
      fake.scriptChat({ kind: 'error', status: 500, message: 'The server had an error.' });
      const error = await rejectsWith(client.chat.completions.create({ model, messages: messages('Hi') }), 502, 'provider_error');
      const logged = (await loggedRecord(gateway, error.requestID!)).provider_request_id;
      if (options.providerRequestIdOnError) assert.match(String(logged), options.providerRequestId);
      else assert.equal(logged, null);
    });

    test('upstream 429 → 429 provider_rate_limited (not the key limit) with Retry-After', { skip: skipped('error-429') }, async () => {
      fake.scriptChat({ kind: 'error', status: 429, message: 'Rate limit reached.' });
      const error = await rejectsWith(client.chat.completions.create({ model, messages: messages('Hi') }), 429, 'provider_rate_limited');
      assert.ok(error.headers?.get('retry-after') !== null);
    });

    test('upstream 500 → 502 provider_error', { skip: skipped('error-500') }, async () => {
      fake.scriptChat({ kind: 'error', status: 500, message: 'The server had an error.' });
      await rejectsWith(client.chat.completions.create({ model, messages: messages('Hi') }), 502, 'provider_error');
    });

    test('a failure before the first frame of a stream keeps its HTTP status (no 200 committed)', { skip: skipped('error-before-first-frame') }, async () => {
      fake.scriptChat({ kind: 'error', status: 401, message: 'Incorrect API key provided.' });
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: messages('Hi'), stream: true }),
      });
      assert.equal(response.status, 502);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      const body = (await response.json()) as { error: { code: string } };
      assert.equal(body.error.code, 'provider_error');
    });

    test('truncated stream → error chunk, then the stream ends', { skip: skipped('truncated-stream') }, async () => {
      fake.scriptChat({ kind: 'stream-truncated', deltas: ['Partial', ' answer'] });
      const result = await postRawStream(gateway.url, key, { model, messages: messages('Hi') });
      assertEndsWithErrorChunk(result, 'Partial answer');
      const record = await records.wait(result.headers.get('x-request-id')!);
      assert.equal(record.errorCode, 'provider_error');
    });

    test('error event inside an HTTP 200 stream → error chunk; the SDK raises it', { skip: skipped('stream-error-event') }, async () => {
      fake.scriptChat({ kind: 'stream-error-event', deltas: ['Partial'], message: 'Overloaded' });
      const result = await postRawStream(gateway.url, key, { model, messages: messages('Hi') });
      assertEndsWithErrorChunk(result, 'Partial');

      fake.scriptChat({ kind: 'stream-error-event', deltas: ['Partial'], message: 'Overloaded' });
      const stream = await client.chat.completions.create({ model, messages: messages('Hi'), stream: true });
      await assert.rejects(
        async () => {
          for await (const chunk of stream) void chunk;
        },
        (error: unknown) => error instanceof OpenAI.APIError && error.code === 'provider_error',
      );
    });

    test('client abort mid-stream aborts the upstream request; the request is still logged', { skip: skipped('abort') }, async () => {
      let closed!: () => void;
      const upstreamClosed = new Promise<void>((resolve) => (closed = resolve));
      fake.scriptChat({ kind: 'stream-hang', deltas: ['Thinking'], onClose: () => closed() });
      const controller = new AbortController();
      const { data: stream, response } = await client.chat.completions
        .create({ model, messages: messages('Think long'), stream: true }, { signal: controller.signal })
        .withResponse();
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      assert.equal(first.done, false);
      controller.abort();
      await upstreamClosed;
      const record = await records.wait(response.headers.get('x-request-id')!);
      assert.equal(record.streaming, true);
      assert.equal(record.requestedModel, model);
    });

    /** The capability's model; a capability offered by neither a model nor a skip reason fails here, naming what to give. */
    const capabilityModel = (capability: Capability): string => {
      const declared = options.capabilityModels[capability];
      assert.ok(declared !== undefined, `${options.name}: give capabilityModels.${capability}, or skip.${capability} with the reason the adapter lacks it`);
      return declared;
    };

    /** The last upstream request carried the configured credential and never the caller's key; the log names the provider. */
    const assertCalledUpstream = async (requestId: string, mode: string) => {
      const headers = JSON.stringify(fake.server.requests.at(-1)?.headers ?? {});
      assert.ok(headers.includes(options.upstreamKey), 'the configured credential reaches the provider');
      assert.ok(!headers.includes('sk-mg-'), 'the client key never goes upstream');
      const record = await records.wait(requestId);
      assert.equal(record.mode, mode);
      assert.equal(record.provider, options.name);
      assert.equal(record.errorCode, null);
    };

    test('embeddings: one vector per input, in order, model as requested', { skip: skipped('embeddings') }, async () => {
      const embeddingModel = capabilityModel('embeddings');
      const { data: result, response } = await client.embeddings
        .create({ model: embeddingModel, input: ['alpha', 'beta'], encoding_format: 'float' })
        .withResponse();
      assert.equal(result.object, 'list');
      assert.equal(result.model, embeddingModel);
      assert.deepEqual(result.data.map((item) => item.index), [0, 1]);
      for (const item of result.data) {
        assert.equal(item.object, 'embedding');
        assert.ok(item.embedding.length > 0 && item.embedding.every((value) => Number.isFinite(value)));
      }
      assert.notDeepEqual(result.data[0]!.embedding, result.data[1]!.embedding, 'each input has its own vector');
      await assertCalledUpstream(response.headers.get('x-request-id')!, 'embedding');
    });

    test('images: generated images come back as b64_json', { skip: skipped('images') }, async () => {
      const { data: result, response } = await client.images
        .generate({ model: capabilityModel('images'), prompt: 'A lighthouse at dusk', n: 1, size: '1024x1024', response_format: 'b64_json' })
        .withResponse();
      assert.equal(result.data?.length, 1);
      const png = Buffer.from(result.data![0]!.b64_json ?? '', 'base64');
      assert.deepEqual([...png.subarray(1, 4)], [...Buffer.from('PNG')], 'the image bytes are a PNG');
      await assertCalledUpstream(response.headers.get('x-request-id')!, 'image_generation');
    });

    test('speech: audio bytes with the content type of the format', { skip: skipped('speech') }, async () => {
      const response = await client.audio.speech.create({ model: capabilityModel('speech'), voice: 'alloy', input: 'Hello there.', response_format: 'mp3' });
      assert.equal(response.headers.get('content-type'), 'audio/mpeg');
      assert.ok((await response.arrayBuffer()).byteLength > 0);
      await assertCalledUpstream(response.headers.get('x-request-id')!, 'audio_speech');
    });

    test('transcription: a multipart upload comes back as text', { skip: skipped('transcription') }, async () => {
      const audio = Buffer.from('RIFF\u0024\u0000\u0000\u0000WAVEfmt fake-audio', 'latin1');
      // Node's own fetch: undici's rejects the SDK's global FormData.
      const { data: result, response } = await openaiClient(gateway.url, key).audio.transcriptions
        .create({ model: capabilityModel('transcription'), file: await toFile(audio, 'speech.wav', { type: 'audio/wav' }) })
        .withResponse();
      assert.ok(typeof result.text === 'string' && result.text.length > 0);
      await assertCalledUpstream(response.headers.get('x-request-id')!, 'audio_transcription');
    });

    describe('with short upstream timeouts', () => {
      let slowGateway: TestGateway;
      let slowKey: string;
      before(async () => {
        const setup = options.gateway(fake.server.url);
        slowGateway = await startTestGateway({
          ...setup,
          env: {
            ...setup.env,
            MODELGATE_UPSTREAM_TIMEOUT_MS: String(SHORT_TIMEOUT_MS),
            MODELGATE_STREAM_IDLE_TIMEOUT_MS: String(SHORT_TIMEOUT_MS),
          },
        });
        slowKey = await slowGateway.createKey({ scopes: ['model:request'] });
      });
      after(async () => {
        await slowGateway?.close();
      });

      test('no response headers in time → 504 provider_timeout', { skip: skipped('timeout') }, async () => {
        fake.scriptChat({ kind: 'delay-headers', delayMs: SHORT_TIMEOUT_MS * 10 });
        const slowClient = openaiClient(slowGateway.url, slowKey, clientAgent);
        await rejectsWith(slowClient.chat.completions.create({ model, messages: messages('Hi') }), 504, 'provider_timeout');
      });

      test('a stream that goes silent → error chunk, then the stream ends (never a hang)', { skip: skipped('stream-idle-timeout') }, async () => {
        fake.scriptChat({ kind: 'stream-hang', deltas: ['Still'], onClose: () => undefined });
        const result = await postRawStream(slowGateway.url, slowKey, { model, messages: messages('Hi') });
        assertEndsWithErrorChunk(result, 'Still');
      });
    });
  });
}

/** The stream carried `text`, then one error chunk of the documented shape, and no [DONE]. */
function assertEndsWithErrorChunk(result: SseResult, text: string): void {
  assert.equal(result.status, 200);
  const last = JSON.parse(result.data.at(-1) ?? '{}') as { error?: { message: string; type: string; code: string } };
  assert.equal(last.error?.type, 'api_error', `last frame is an error chunk: ${result.raw}`);
  assert.equal(last.error?.code, 'provider_error');
  assert.ok(typeof last.error?.message === 'string' && last.error.message.length > 0);
  const content = result.data
    .slice(0, -1)
    .map((data) => JSON.parse(data) as { choices?: { delta?: { content?: string } }[] })
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');
  assert.equal(content, text);
  assert.ok(!result.data.includes('[DONE]'), 'a failed stream does not claim completion with [DONE]');
}
