/**
 * The fault matrix of routing (docs/routing.md): an upstream that fails in each way a provider
 * fails, for each client surface (chat JSON and streams, embeddings, the Messages API's and the
 * Responses API's JSON and streams), checking the retry chosen, what the client got, the log's
 * attempts, the cooldown, and that nothing was retried after the first byte reached the client.
 * The Messages API's models here are OpenAI's, so their calls are translated to chat; the
 * Responses API's go to each deployment's own `/v1/responses` (the native pass-through).
 *
 * Every model below has two deployments of one OpenAI-compatible provider: `a` (weighted so it
 * is always tried first) and `b` (another base URL and credential). A failure on `a` before the
 * answer began is retried on `b`, and cools `a` down (one failure is enough here; and
 * `maxRetryWaitMs: 0` makes a's `Retry-After` a cooldown rather than the wait for a retry on `a`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startFaultyOpenAI, type Fault, type FaultyOpenAI } from './fakes/openai-faults.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

const CHAT = 'gpt-4o-mini';
const STREAM = 'gpt-4o';
const EMBEDDING = 'text-embedding-3-small';
/** The Messages API's own models: each surface keeps its own cooldowns. */
const MESSAGES = 'gpt-4.1-mini';
const MESSAGES_STREAM = 'gpt-4.1-nano';
/** The Responses API's own models, likewise. */
const RESPONSES = 'gpt-5-mini';
const RESPONSES_STREAM = 'gpt-5-nano';

/** What the first attempt on `a` ends with, for each fault that strikes before the answer began. */
const OUTCOME_BEFORE_ANSWER: Record<Fault, string> = {
  'rate-limit': 'provider_rate_limited',
  'server-error-500': 'provider_error',
  'unavailable-503': 'provider_error',
  'connection-reset': 'provider_error',
  'hang-before-headers': 'provider_timeout',
  // A JSON answer cut or stalled after its first bytes has not begun for the client: retried.
  'hang-mid-stream': 'provider_timeout',
  truncated: 'provider_error',
  'slow-first-token': 'provider_timeout',
};

/** Faults that strike a stream after its first frame was relayed: never retried. */
const AFTER_FIRST_FRAME: readonly Fault[] = ['hang-mid-stream', 'truncated'];

function routedModel(model: string, b: FaultyOpenAI) {
  return {
    model,
    deployments: [
      { name: 'a', provider: 'openai', weight: 1_000_000 },
      { name: 'b', provider: 'openai', baseUrl: b.url, apiKeyEnv: 'OPENAI_API_KEY_B', weight: 1 },
    ],
    retries: 1,
    backoffMs: 10,
    maxRetryWaitMs: 0,
    cooldown: { failures: 1, windowMs: 60_000, durationMs: 60_000 },
    // Below the fake's SLOW_MS (1.5 s), with room for a busy machine's slow answers to come first.
    timeouts: { firstByteMs: 1_200 },
  };
}

interface Setup {
  a: FaultyOpenAI;
  b: FaultyOpenAI;
  gateway: TestGateway;
  client: OpenAI;
  /** The Messages API's official client, on the same key. */
  anthropic: Anthropic;
}

async function setUp(): Promise<Setup> {
  const a = await startFaultyOpenAI('a');
  const b = await startFaultyOpenAI('b');
  const gateway = await startTestGateway({
    env: { OPENAI_BASE_URL: a.url, OPENAI_API_KEY_B: 'sk-second-credential-b', MODELGATE_STREAM_IDLE_TIMEOUT_MS: '800' },
    configFile: { routing: [CHAT, STREAM, EMBEDDING, MESSAGES, MESSAGES_STREAM, RESPONSES, RESPONSES_STREAM].map((model) => routedModel(model, b)) },
  });
  const key = await gateway.createKey();
  const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0, timeout: 20_000 });
  const anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0, timeout: 20_000 });
  return { a, b, gateway, client, anthropic };
}

async function tearDown(setup: Setup): Promise<void> {
  await setup.gateway.close();
  await setup.a.close();
  await setup.b.close();
}

interface Answered {
  text: string;
  headers: Headers;
  requestId: string;
}

async function chat(client: OpenAI): Promise<Answered> {
  const { data, response } = await client.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  return { text: data.choices[0]?.message.content ?? '', headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

async function streamed(client: OpenAI): Promise<Answered & { failure: unknown }> {
  const { data, response } = await client.chat.completions.create({ model: STREAM, stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  let text = '';
  let failure: unknown = null;
  try {
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
  } catch (error) {
    failure = error;
  }
  return { text, failure, headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

async function embedded(client: OpenAI): Promise<Answered> {
  const { data, response } = await client.embeddings.create({ model: EMBEDDING, input: 'Hi' }).withResponse();
  assert.equal(data.data.length, 1);
  return { text: 'embedded', headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

/** A Messages API answer for an OpenAI-served model (the request is translated to the chat call). */
async function messaged(anthropic: Anthropic): Promise<Answered> {
  const { data, response } = await anthropic.messages.create({ model: MESSAGES, max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  const text = data.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return { text, headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

async function messagesStreamed(anthropic: Anthropic): Promise<Answered & { failure: unknown }> {
  const { data, response } = await anthropic.messages.create({ model: MESSAGES_STREAM, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
  let text = '';
  let failure: unknown = null;
  try {
    for await (const event of data) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
  } catch (error) {
    failure = error;
  }
  return { text, failure, headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

/** A Responses API answer (OpenAI's own API on each deployment, passed through). */
async function responded(client: OpenAI): Promise<Answered> {
  const { data, response } = await client.responses.create({ model: RESPONSES, input: 'Hi' }).withResponse();
  return { text: data.output_text, headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

/** A Responses API stream read event by event; `events` are their types in order. */
async function responsesStreamed(client: OpenAI): Promise<Answered & { failure: unknown; events: string[] }> {
  const { data, response } = await client.responses.create({ model: RESPONSES_STREAM, input: 'Hi', stream: true }).withResponse();
  let text = '';
  let failure: unknown = null;
  const events: string[] = [];
  try {
    for await (const event of data) {
      events.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
  } catch (error) {
    failure = error;
  }
  return { text, failure, events, headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the admin view's detail is read loosely; each field used is asserted
async function attemptsOf(gateway: TestGateway, requestId: string): Promise<any[]> {
  const record = await loggedRecord(gateway, requestId);
  return record.detail?.attempts ?? [];
}

/** The retry and cooldown of a fault before the answer began, on one surface. */
async function retriedOnB(setup: Setup, model: string, fault: Fault, send: () => Promise<Answered>, servedText: string | null): Promise<void> {
  const { a, b, gateway } = setup;
  const before = { a: a.count(model), b: b.count(model) };
  a.fail(model, fault);
  const first = await send();
  if (servedText !== null) assert.equal(first.text, servedText, 'the client got b\'s whole answer');
  assert.equal(first.headers.get('x-modelgate-attempts'), '2');
  assert.equal(first.headers.get('x-modelgate-model'), model);
  assert.deepEqual(
    (await attemptsOf(gateway, first.requestId)).map(({ attempt, deployment, outcome, model: tried }) => ({ attempt, deployment, outcome, model: tried })),
    [
      { attempt: 1, deployment: 'a', outcome: OUTCOME_BEFORE_ANSWER[fault], model },
      { attempt: 2, deployment: 'b', outcome: 'ok', model },
    ],
  );
  assert.deepEqual({ a: a.count(model), b: b.count(model) }, { a: before.a + 1, b: before.b + 1 });
  const metrics = gateway.gateway.context.metrics.render();
  assert.match(metrics, new RegExp(`^modelgate_routing_retries_total\\{model="${model}"\\} 1$`, 'm'));
  assert.match(metrics, new RegExp(`^modelgate_deployment_cooldowns_total\\{model="${model}",deployment="a"\\} 1$`, 'm'));
  // a is cooling down: the next request goes to b at once.
  const second = await send();
  assert.equal(second.headers.get('x-modelgate-attempts'), '1');
  assert.deepEqual({ a: a.count(model), b: b.count(model) }, { a: before.a + 1, b: before.b + 2 });
}

const FAULTS = Object.keys(OUTCOME_BEFORE_ANSWER) as Fault[];

for (const fault of FAULTS) {
  describe(`fault: ${fault}`, () => {
    let setup: Setup;
    before(async () => {
      setup = await setUp();
    });
    after(() => tearDown(setup));

    test('chat completion (JSON): retried on the other deployment, which then takes the traffic', () =>
      retriedOnB(setup, CHAT, fault, () => chat(setup.client), 'served by b'));

    test('embeddings: retried on the other deployment, which then takes the traffic', () =>
      retriedOnB(setup, EMBEDDING, fault, () => embedded(setup.client), null));

    if (AFTER_FIRST_FRAME.includes(fault)) {
      test('chat stream: the first frame was relayed, so the failure reaches the client and nothing is retried', async () => {
        const { a, b, client } = setup;
        a.fail(STREAM, fault);
        const answered = await streamed(client);
        assert.ok(answered.failure instanceof OpenAI.APIError, `the SDK raises the error chunk, not ${String(answered.failure)}`);
        assert.equal(answered.text, '', 'only the first (empty) frame came');
        await notRetried(setup, answered, STREAM, 1);
        // A failure after the answer began does not cool the deployment down: a still takes the traffic.
        const next = await streamed(client);
        assert.equal(next.text, 'served by a');
        assert.equal(a.count(STREAM), 2);
        assert.equal(b.count(STREAM), 0);
      });

      test('Messages API stream: the same, the failure as an error event', async () => {
        setup.a.fail(MESSAGES_STREAM, fault);
        const answered = await messagesStreamed(setup.anthropic);
        assert.ok(answered.failure instanceof Anthropic.APIError, `the SDK raises the error event, not ${String(answered.failure)}`);
        await notRetried(setup, answered, MESSAGES_STREAM, 1);
      });

      test('Responses API stream: the same, the failure as response.failed after response.created', async () => {
        setup.a.fail(RESPONSES_STREAM, fault);
        const answered = await responsesStreamed(setup.client);
        assert.equal(answered.failure, null, `the events end in order, not with ${String(answered.failure)}`);
        assert.deepEqual([answered.events[0], answered.events.at(-1)], ['response.created', 'response.failed']);
        assert.equal(answered.text, '');
        await notRetried(setup, answered, RESPONSES_STREAM, 1);
      });
    } else {
      test('chat stream: failed before the first frame, so retried on the other deployment', () =>
        retriedOnB(setup, STREAM, fault, () => streamed(setup.client), 'served by b'));

      test('Messages API stream: failed before the first event, so retried on the other deployment', () =>
        retriedOnB(setup, MESSAGES_STREAM, fault, () => messagesStreamed(setup.anthropic), 'served by b'));

      test('Responses API stream: failed before the first event, so retried on the other deployment', () =>
        retriedOnB(setup, RESPONSES_STREAM, fault, () => responsesStreamed(setup.client), 'served by b'));
    }

    test('Messages API (JSON): retried on the other deployment, which then takes the traffic', () =>
      retriedOnB(setup, MESSAGES, fault, () => messaged(setup.anthropic), 'served by b'));

    test('Responses API (JSON): retried on the other deployment, which then takes the traffic', async () => {
      await retriedOnB(setup, RESPONSES, fault, () => responded(setup.client), 'served by b');
      // OpenAI's models take the Responses API natively: every attempt went to /v1/responses.
      const paths = [setup.a, setup.b].flatMap((upstream) => upstream.server.requests.filter((request) => request.json?.model === RESPONSES).map((request) => request.path));
      assert.deepEqual(new Set(paths), new Set(['/v1/responses']));
    });
  });
}

/** A stream that failed after its first frame: one attempt, logged ok, and no request reached b. */
async function notRetried(setup: Setup, answered: Answered, model: string, aRequests: number): Promise<void> {
  assert.equal(answered.headers.get('x-modelgate-attempts'), '1');
  assert.equal(setup.b.count(model), 0, 'no second attempt anywhere');
  assert.equal(setup.a.count(model), aRequests);
  const attempts = await attemptsOf(setup.gateway, answered.requestId);
  assert.deepEqual(attempts.map(({ deployment, outcome }) => ({ deployment, outcome })), [{ deployment: 'a', outcome: 'ok' }]);
}
