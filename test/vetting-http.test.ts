import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Keyring } from '../src/crypto/index.js';
import { GatewayError } from '../src/errors/index.js';
import type { ChatCall } from '../src/model-api/index.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';
import { completion, promptText, scriptedChatProvider, usage, verdict, type ScriptedAnswer } from './helpers/vetting-provider.js';

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/*
 * The VETTING endpoints through a real gateway (HTTP, auth, validation, limits, request
 * record), with in-process scripted providers standing in for the vendors. The same flows
 * against the fake vendor upstreams are in vetting-e2e.test.ts.
 */

const FALLBACK = 'Let us work through it together. What have you tried?';
const ENCRYPTION_KEY = Buffer.alloc(32, 7);
/** Values of the test keys' project (createKey's default). */
const keyring = new Keyring(ENCRYPTION_KEY).forProject('default');

type Script = (call: ChatCall, index: number) => ScriptedAnswer;
const scripts: { draft: Script; verify: Script } = { draft: () => completion('A hint.'), verify: () => verdict(true, 'ok') };
const drafter = scriptedChatProvider('scripted-draft', (call, index) => scripts.draft(call, index));
const verifier = scriptedChatProvider('scripted-verify', (call, index) => scripts.verify(call, index));

/** The gateway's own vetting routes, with the scripted providers in place of the configured ones. */
const CONFIG = {
  // Declared so that start-up takes the models they serve; the gateway is given the scripted
  // providers of these names in their place, and nothing is sent to this address.
  providers: { compatible: [drafter.name, verifier.name].map((name) => ({ name, baseUrl: 'http://127.0.0.1:9/v1' })) },
  catalog: {
    models: [
      { id: 'tutor-text', provider: 'scripted-draft', mode: 'chat', input_modalities: ['text'], pricing: { input_per_million: 1, output_per_million: 4 } },
      { id: 'tutor-vision', provider: 'scripted-draft', mode: 'chat', input_modalities: ['text', 'image'] },
      { id: 'checker', provider: 'scripted-verify', mode: 'chat', pricing: { input_per_million: 10, output_per_million: 30 } },
      { id: 'embedder', provider: 'scripted-draft', mode: 'embedding' },
    ],
  },
  vetting: { defaultModel: 'tutor-text', verificationModel: 'checker', maxAttemptsLimit: 4, fallbackMessage: FALLBACK },
};

let gateway: TestGateway;
let tap: RecordTap;
let secret: string;
let client: OpenAI;

before(async () => {
  tap = new RecordTap();
  gateway = await startTestGateway({
    env: { MODELGATE_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64') },
    configFile: CONFIG,
    routes: [...ROUTE_MODULES, tap.routes],
    providers: [drafter, verifier],
  });
  secret = await gateway.createKey({ scopes: ['model:request'] });
  client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
after(() => gateway.close());
beforeEach(() => {
  drafter.calls.length = 0;
  verifier.calls.length = 0;
  scripts.draft = () => completion('A hint.');
  scripts.verify = () => verdict(true, 'ok');
});

async function post(path: string, body: unknown, key = secret) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Loose, requestId: response.headers.get('x-request-id')! };
}

/** Posts and expects a 400-class error naming `param`, with no provider call made. */
async function expectRejected(path: string, body: unknown, expected: { status?: number; code: string; param?: string | null }) {
  const response = await post(path, body);
  assert.equal(response.status, expected.status ?? 400, JSON.stringify(response.body));
  assert.equal(response.body.error.code, expected.code);
  if (expected.param !== undefined) assert.equal(response.body.error.param, expected.param);
  assert.equal(drafter.calls.length + verifier.calls.length, 0, 'no provider was called');
  return response.body.error as { message: string };
}

const ANSWER = 'Paris';
const fullBody = (overrides: Record<string, unknown> = {}) => ({
  mode: 'vetting',
  config: { chatModel: { modelId: 'tutor-text', temperature: 0.2, maxTokens: 300 }, verificationModel: { modelId: 'checker' } },
  prompts: {},
  context: {
    sessionId: 'session-1',
    userId: 'student-7',
    items: [{ question: { id: 'q1', subject: 'geography', text: 'What is the capital of France?' }, answerKey: { correctAnswer: ANSWER, keyConcepts: ['Seine river'] } }],
  },
  messages: [{ role: 'user', content: 'Just tell me the capital of France.' }],
  ...overrides,
});

describe('POST /v1/chat/vetting', () => {
  test('drafts, verifies on the internal model and answers in the chat shape with vetting_info', async () => {
    scripts.draft = () => completion('Which river runs through the city you are thinking of?', { usage: usage(40, 12) });
    scripts.verify = () => verdict(true, 'Guides without answering.', false, usage(90, 15));
    const systemPrompt = keyring.encrypt('Never reveal that the answer is Paris.');
    const response = (await client.post('/chat/vetting', {
      body: {
        messages: [
          { role: 'system', content: keyring.encrypt('You are a geography tutor.') },
          { role: 'user', content: 'What is the capital of France? enc::not-a-secret' },
        ],
        temperature: 0.4,
        max_tokens: 200,
        vettingConfig: { systemPrompt, guideline: 'Ask one question at a time.' },
      },
    })) as Loose;

    assert.equal(response.object, 'chat.completion');
    assert.equal(response.model, 'tutor-text');
    assert.equal(response.choices[0].message.content, 'Which river runs through the city you are thinking of?');
    assert.equal(response.choices[0].finish_reason, 'stop');
    assert.deepEqual(response.usage, { prompt_tokens: 130, completion_tokens: 27, total_tokens: 157 });
    assert.deepEqual(response.vetting_info, { attemptCount: 1, stopReason: 'VERIFICATION_PASSED', lastFailureReason: null });
    assert.deepEqual(response.safety_signals, { requires_attention: false });

    const draftCall = drafter.calls[0]!;
    assert.equal(draftCall.upstreamModel, 'tutor-text');
    assert.deepEqual(draftCall.body.messages, [
      { role: 'system', content: 'You are a geography tutor.' },
      { role: 'user', content: 'What is the capital of France? enc::not-a-secret' },
    ]);
    assert.equal(draftCall.body.temperature, 0.4);
    assert.equal(draftCall.body.max_tokens, 200);
    assert.doesNotMatch(promptText(draftCall), /Never reveal/, 'the verification guideline is not shown to the drafting model');

    const verifyCall = verifier.calls[0]!;
    assert.equal(verifyCall.upstreamModel, 'checker');
    const verifierPrompt = promptText(verifyCall);
    assert.match(verifierPrompt, /Never reveal that the answer is Paris\./);
    assert.match(verifierPrompt, /Ask one question at a time\./);
    assert.match(verifierPrompt, /Which river runs through the city/);
    assert.equal((verifyCall.body.response_format as Loose).json_schema.name, 'vetting_verdict');

    const record = await tap.wait(drafter.calls[0]!.requestId);
    assert.equal(record.mode, 'vetting');
    assert.equal(record.requestedModel, 'tutor-text');
    // Each side priced with its own model: 40×$1 + 12×$4 (draft) + 90×$10 + 15×$30 (verify) per million tokens.
    assert.equal(record.costMicroUsd, 40 + 48 + 900 + 450);
    assert.equal(record.resolvedModel, 'tutor-text');
    assert.deepEqual(record.usage, { promptTokens: 130, completionTokens: 27, totalTokens: 157, cachedPromptTokens: null });
    const logged = record.requestPayload as Loose;
    assert.equal(logged.vettingConfig.systemPrompt, 'Never reveal that the answer is Paris.', 'Rule 3 fields are logged decrypted');
    assert.equal(logged.messages[0].content, 'You are a geography tutor.');
    assert.equal(logged.messages[1].content, 'What is the capital of France? enc::not-a-secret');
    assert.equal((record.responsePayload as Loose).vetting_info.stopReason, 'VERIFICATION_PASSED');
    assert.deepEqual(
      record.calls?.map((call) => [call.purpose, call.model, call.costMicroUsd]),
      [
        ['draft', 'tutor-text', 40 + 48],
        ['verification', 'checker', 900 + 450],
      ],
      'each side is listed with its own model and cost',
    );
  });

  test('without a model it drafts with vetting.defaultModel', async () => {
    const response = (await client.post('/chat/vetting', { body: { messages: [{ role: 'user', content: 'hi' }] } })) as Loose;
    assert.equal(response.model, 'tutor-text');
    assert.equal(drafter.calls[0]!.upstreamModel, 'tutor-text');
  });

  test('fails closed: never-passing drafts give the fallback after maxAttempts drafts and verifications, usage summed', async () => {
    scripts.draft = () => completion('The capital is Paris.', { usage: usage(10, 5) });
    scripts.verify = () => verdict(false, 'States the answer.', false, usage(20, 4));
    const response = (await client.post('/chat/vetting', {
      body: { model: 'tutor-text', messages: [{ role: 'user', content: 'capital?' }], vettingConfig: { maxAttempts: 4 } },
    })) as Loose;
    assert.equal(response.choices[0].message.content, FALLBACK);
    assert.deepEqual(response.vetting_info, { attemptCount: 4, stopReason: 'MAX_ATTEMPTS_REACHED', lastFailureReason: 'States the answer.' });
    assert.equal(drafter.calls.length, 4);
    assert.equal(verifier.calls.length, 4);
    assert.deepEqual(response.usage, { prompt_tokens: 120, completion_tokens: 36, total_tokens: 156 });
    assert.doesNotMatch(JSON.stringify(response), /The capital is Paris/);
  });

  test('a failed provider call is a 200 with the stop reason, not an HTTP error', async () => {
    scripts.draft = () => new GatewayError('provider_error', 'The model provider failed to answer. Try again later.');
    const generation = (await client.post('/chat/vetting', { body: { messages: [{ role: 'user', content: 'hi' }] } })) as Loose;
    assert.equal(generation.vetting_info.stopReason, 'GENERATION_ERROR');
    assert.equal(generation.choices[0].message.content, FALLBACK);

    scripts.draft = () => completion('A hint.');
    scripts.verify = () => new GatewayError('provider_timeout', 'The model provider did not answer in time.');
    const verification = (await client.post('/chat/vetting', { body: { messages: [{ role: 'user', content: 'hi' }] } })) as Loose;
    assert.equal(verification.vetting_info.stopReason, 'VERIFICATION_ERROR');
    assert.equal(verification.choices[0].message.content, FALLBACK);
  });

  test('a later draft the provider refuses stays the caller\'s 400, and the calls already made are still logged and charged', async () => {
    scripts.draft = (_call, index) =>
      index === 0 ? completion('It is Paris.', { usage: usage(10, 5) }) : new GatewayError('invalid_body', 'The provider rejected the request: the prompt is too long.');
    scripts.verify = () => verdict(false, 'States the answer.', false, usage(20, 4));
    const error = await client.post('/chat/vetting', { body: { messages: [{ role: 'user', content: 'capital?' }], vettingConfig: { maxAttempts: 3 } } }).then(
      () => assert.fail('expected a 400'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.equal(error.code, 'invalid_body');
    assert.equal(drafter.calls.length, 2);
    const record = await tap.wait(drafter.calls[0]!.requestId);
    assert.deepEqual(record.usage, { promptTokens: 30, completionTokens: 9, totalTokens: 39, cachedPromptTokens: null });
    // 10×$1 + 5×$4 (draft) + 20×$10 + 4×$30 (verify) per million tokens.
    assert.equal(record.costMicroUsd, 10 + 20 + 200 + 120);
    assert.equal((record.extra as Loose).verificationCalls, 1);
  });

  test('a safety flag from the verifier stops the loop and sets safety_signals', async () => {
    scripts.verify = () => verdict(false, 'The student may be in danger.', true);
    const response = (await client.post('/chat/vetting', { body: { messages: [{ role: 'user', content: 'hi' }], vettingConfig: { maxAttempts: 3 } } })) as Loose;
    assert.equal(response.vetting_info.stopReason, 'SAFETY_TRIGGERED');
    assert.deepEqual(response.safety_signals, { requires_attention: true });
    assert.equal(response.choices[0].message.content, FALLBACK);
    assert.equal(drafter.calls.length, 1);
  });

  test('maxAttempts above the configured limit is a 400 naming the field', async () => {
    const error = await expectRejected(
      '/v1/chat/vetting',
      { messages: [{ role: 'user', content: 'hi' }], vettingConfig: { maxAttempts: 5 } },
      { code: 'invalid_body', param: 'vettingConfig.maxAttempts' },
    );
    assert.match(error.message, /limit of 4/);
    await expectRejected('/v1/chat/vetting', { messages: [{ role: 'user', content: 'hi' }], vettingConfig: { maxAttempts: 0 } }, { code: 'invalid_body', param: 'vettingConfig.maxAttempts' });
  });

  test('bad input is a structured 400 before any provider call', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    await expectRejected('/v1/chat/vetting', { model: 'embedder', messages }, { code: 'model_mode_mismatch', param: 'model' });
    await expectRejected('/v1/chat/vetting', { model: 'no-such-model', messages }, { code: 'model_not_found', param: 'model' });
    await expectRejected('/v1/chat/vetting', { messages, stream: true }, { code: 'invalid_body', param: 'stream' });
    await expectRejected('/v1/chat/vetting', { messages: [] }, { code: 'invalid_body', param: 'messages' });
    await expectRejected('/v1/chat/vetting', { messages, vettingConfig: { systemPrompt: 'enc::v1.00000000.AAAA' } }, { code: 'invalid_body', param: 'vettingConfig.systemPrompt' });
    await expectRejected(
      '/v1/chat/vetting',
      { messages: [{ role: 'system', content: 'enc::garbage' }, ...messages] },
      { code: 'invalid_body', param: 'messages[0].content' },
    );
    const image = { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] };
    await expectRejected('/v1/chat/vetting', { model: 'tutor-text', messages: [image] }, { code: 'unsupported_input_modality', param: 'messages[0].content[1]' });
    // the same image is fine for a model that reads images
    const ok = await post('/v1/chat/vetting', { model: 'tutor-vision', messages: [image] });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.vetting_info.stopReason, 'VERIFICATION_PASSED');
  });

  test('stream false is accepted; enc:: in other fields is plain text', async () => {
    const response = await post('/v1/chat/vetting', {
      messages: [{ role: 'assistant', content: 'enc::v1.00000000.AAAA' }, { role: 'user', content: 'hi' }],
      vettingConfig: { guideline: 'enc::v1.00000000.AAAA' },
      stream: false,
    });
    assert.equal(response.status, 200);
    assert.equal((drafter.calls[0]!.body.messages as Loose[])[0].content, 'enc::v1.00000000.AAAA');
    assert.match(promptText(verifier.calls[0]!), /enc::v1\.00000000\.AAAA/);
  });

  test('a key may only use the drafting models it allows; the internal verifier needs no grant', async () => {
    const limited = await gateway.createKey({ scopes: ['model:request'], allowedModels: ['tutor-text'] });
    const allowed = await post('/v1/chat/vetting', { model: 'tutor-text', messages: [{ role: 'user', content: 'hi' }] }, limited);
    assert.equal(allowed.status, 200);
    drafter.calls.length = 0;
    verifier.calls.length = 0;
    const denied = await post('/v1/chat/vetting', { model: 'tutor-vision', messages: [{ role: 'user', content: 'hi' }] }, limited);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'model_not_allowed');
    assert.equal(drafter.calls.length, 0);
  });

  test('a daily token cap admits the loop while some of it is left, and refuses before any provider call once it is used up', async () => {
    // 10 tokens: far less than the loop's estimate, which is reserved clamped to them.
    const capped = await gateway.createKey({ scopes: ['model:request'], dailyTokens: 10 });
    const first = await post('/v1/chat/vetting', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 500 }, capped);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal((await tap.wait(first.requestId)).usage?.totalTokens, 43);
    drafter.calls.length = 0;
    // The loop used 43 tokens: nothing is left.
    const response = await post('/v1/chat/vetting', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 500 }, capped);
    assert.equal(response.status, 429);
    assert.equal(response.body.error.code, 'daily_token_cap_exceeded');
    assert.equal(drafter.calls.length, 0);
  });

  test('needs the model:request scope', async () => {
    const cryptoOnly = await gateway.createKey({ scopes: ['utils:crypto'] });
    const response = await post('/v1/chat/vetting', { messages: [{ role: 'user', content: 'hi' }] }, cryptoOnly);
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, 'insufficient_scope');
  });
});

describe('POST /v1/vetting/full', () => {
  test('vetting mode: drafts without the answer key, verifies against it, and reports every attempt', async () => {
    scripts.draft = (_call, index) =>
      index === 0 ? completion('It is PARIS, of course.', { usage: usage(50, 6) }) : completion('Which river flows through that capital?', { usage: usage(60, 9) });
    scripts.verify = () => verdict(true, 'A good guiding question.', false, usage(120, 14));
    const response = (await client.post('/vetting/full', { body: fullBody() })) as Loose;

    assert.equal(response.status, 'success');
    assert.equal(response.mode, 'vetting');
    assert.deepEqual(response.result, { role: 'assistant', content: 'Which river flows through that capital?' });
    assert.equal(response.verification.passed, true);
    assert.equal(response.verification.stopReason, 'VERIFICATION_PASSED');
    assert.equal(response.verification.attemptCount, 2);
    assert.equal(response.verification.attempts.length, 2);
    assert.deepEqual(response.verification.attempts[0], {
      chatResponse: 'It is PARIS, of course.',
      verificationPassed: false,
      verificationOutput: null,
      requiresAttention: false,
      checkedBy: 'local_check',
    });
    assert.equal(response.verification.attempts[1].verificationPassed, true);
    assert.equal(response.verification.attempts[1].checkedBy, 'verifier');
    assert.match(response.verification.attempts[1].verificationOutput, /"passed":true/);
    assert.doesNotMatch(response.verification.lastFailureReason, /paris/i);
    assert.deepEqual(response.usage, { chatTokens: 125, verificationTokens: 134, totalTokens: 259 });
    assert.equal(response.metadata.sessionId, 'session-1');
    assert.equal(response.metadata.userId, 'student-7');
    assert.equal(response.metadata.chatModelUsed, 'tutor-text');
    assert.equal(response.metadata.verificationModelUsed, 'checker');
    assert.equal(typeof response.metadata.processingTimeMs, 'number');
    assert.ok(!Number.isNaN(Date.parse(response.metadata.timestamp)));
    assert.deepEqual(response.safety_signals, { requires_attention: false });

    assert.equal(drafter.calls.length, 2);
    assert.equal(verifier.calls.length, 1, 'the leaking first draft cost no verification call');
    const draftPrompt = promptText(drafter.calls[0]!);
    assert.match(draftPrompt, /What is the capital of France\?/, 'the tutor knows the question');
    assert.doesNotMatch(draftPrompt, /Seine river|"Paris"|Paris\b/, 'but not the answer key');
    assert.equal(drafter.calls[0]!.body.temperature, 0.2);
    assert.equal(drafter.calls[0]!.body.max_tokens, 300);
    const verifierPrompt = promptText(verifier.calls[0]!);
    assert.match(verifierPrompt, /Correct answer \(must not be disclosed\): Paris/);
    assert.match(verifierPrompt, /Seine river/);
    assert.match(verifierPrompt, /Which river flows through that capital\?/);
  });

  test('never the answer key in lastFailureReason, and the fallback when no draft passes', async () => {
    scripts.draft = () => completion('Think about the city on the river.');
    scripts.verify = () => verdict(false, 'It nearly says Paris by pointing at the Seine   River.');
    const response = (await client.post('/vetting/full', { body: fullBody({ config: { ...fullBody().config, maxVerificationAttempts: 2 } }) })) as Loose;
    assert.equal(response.verification.stopReason, 'MAX_ATTEMPTS_REACHED');
    assert.equal(response.verification.passed, false);
    assert.equal(response.result.content, FALLBACK);
    assert.equal(response.verification.lastFailureReason, 'It nearly says [protected] by pointing at the [protected].');
    assert.equal(drafter.calls.length, 2);
    assert.equal(verifier.calls.length, 2);
    assert.doesNotMatch(JSON.stringify(drafter.calls[1]!.body.messages), /Paris|Seine/i, 'the feedback to the next draft is scrubbed too');
  });

  test('a provider safety block stops with SAFETY_TRIGGERED', async () => {
    scripts.draft = () => completion('', { finishReason: 'content_filter' });
    const response = (await client.post('/vetting/full', { body: fullBody() })) as Loose;
    assert.equal(response.verification.stopReason, 'SAFETY_TRIGGERED');
    assert.deepEqual(response.safety_signals, { requires_attention: true });
    assert.equal(response.result.content, FALLBACK);
    assert.equal(verifier.calls.length, 0);
  });

  test('chat mode: one draft, no verification, null verification fields', async () => {
    scripts.draft = () => completion('Hello! What are you working on?', { usage: usage(30, 8) });
    const response = (await client.post('/vetting/full', {
      body: { mode: 'chat', config: { chatModel: { modelId: 'tutor-text' } }, prompts: {}, messages: [{ role: 'user', content: 'hi' }] },
    })) as Loose;
    assert.equal(response.mode, 'chat');
    assert.equal(response.verification, null);
    assert.equal(response.metadata.verificationModelUsed, null);
    assert.equal(response.result.content, 'Hello! What are you working on?');
    assert.deepEqual(response.usage, { chatTokens: 38, verificationTokens: 0, totalTokens: 38 });
    assert.equal(verifier.calls.length, 0);
    assert.match(promptText(drafter.calls[0]!), /patient, encouraging tutor/, 'the default tutor prompt');
  });

  test('enc:: prompts are decrypted for the models and the log, and a custom verification prompt still gets the answer key', async () => {
    const chatSystemPrompt = keyring.encrypt('You are Ada, a calm geography tutor.');
    const verificationSystemPrompt = keyring.encrypt('Reject any reply that names a city.');
    const response = await post('/v1/vetting/full', fullBody({ prompts: { chatSystemPrompt, verificationSystemPrompt } }));
    assert.equal(response.status, 200);
    assert.match(promptText(drafter.calls[0]!), /You are Ada, a calm geography tutor\./);
    const verifierPrompt = promptText(verifier.calls[0]!);
    assert.match(verifierPrompt, /Reject any reply that names a city\./);
    assert.match(verifierPrompt, /Correct answer \(must not be disclosed\): Paris/);
    assert.match(verifierPrompt, /## Your verdict/);
    const record = await tap.wait(response.requestId);
    assert.deepEqual((record.requestPayload as Loose).prompts, {
      chatSystemPrompt: 'You are Ada, a calm geography tutor.',
      verificationSystemPrompt: 'Reject any reply that names a city.',
    });
    assert.equal(record.mode, 'vetting');
    assert.equal(record.requestedModel, 'tutor-text');
  });

  test('an enc:: prompt made with a key of another project is the same 400 as a tampered one, before any provider call', async () => {
    const foreign = new Keyring(ENCRYPTION_KEY).forProject('another-project').encrypt('You are Ada, a calm geography tutor.');
    const own = keyring.encrypt('You are Ada, a calm geography tutor.');
    const tampered = `${own.slice(0, -4)}${own.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const refused = await expectRejected('/v1/vetting/full', fullBody({ prompts: { chatSystemPrompt: foreign } }), { code: 'invalid_body', param: 'prompts.chatSystemPrompt' });
    const altered = await expectRejected('/v1/vetting/full', fullBody({ prompts: { chatSystemPrompt: tampered } }), { code: 'invalid_body', param: 'prompts.chatSystemPrompt' });
    assert.equal(refused.message, altered.message);
    await expectRejected('/v1/chat/vetting', { messages: [{ role: 'system', content: foreign }, { role: 'user', content: 'hi' }] }, { code: 'invalid_body', param: 'messages[0].content' });
  });

  test('fields required in vetting mode are a 400 naming them', async () => {
    const base = fullBody();
    await expectRejected('/v1/vetting/full', { ...base, context: { sessionId: 's' } }, { code: 'invalid_body', param: 'context.items' });
    await expectRejected('/v1/vetting/full', { ...base, context: { items: [] } }, { code: 'invalid_body', param: 'context.items' });
    await expectRejected(
      '/v1/vetting/full',
      { ...base, context: { items: [{ question: { text: 'q?' }, answerKey: { keyConcepts: ['x'] } }] } },
      { code: 'invalid_body', param: 'context.items[0].answerKey.correctAnswer' },
    );
    await expectRejected(
      '/v1/vetting/full',
      { ...base, context: { items: [{ answerKey: { correctAnswer: 'x' } }] } },
      { code: 'invalid_body', param: 'context.items[0].question.text' },
    );
    await expectRejected('/v1/vetting/full', { ...base, config: { chatModel: { modelId: 'tutor-text' } } }, { code: 'invalid_body', param: 'config.verificationModel.modelId' });
    await expectRejected('/v1/vetting/full', { ...base, prompts: undefined }, { code: 'invalid_body', param: 'prompts' });
    await expectRejected('/v1/vetting/full', { ...base, mode: 'grade' }, { code: 'invalid_body', param: 'mode' });
  });

  test('other bad input is a structured 400 before any provider call', async () => {
    const base = fullBody();
    await expectRejected('/v1/vetting/full', { ...base, config: { ...base.config, chatModel: { modelId: 'embedder' } } }, { code: 'model_mode_mismatch', param: 'config.chatModel.modelId' });
    await expectRejected('/v1/vetting/full', { ...base, config: { ...base.config, verificationModel: { modelId: 'embedder' } } }, { code: 'model_mode_mismatch', param: 'config.verificationModel.modelId' });
    await expectRejected('/v1/vetting/full', { ...base, config: { ...base.config, maxVerificationAttempts: 9 } }, { code: 'invalid_body', param: 'config.maxVerificationAttempts' });
    await expectRejected('/v1/vetting/full', { ...base, stream: true }, { code: 'invalid_body', param: 'stream' });
    await expectRejected('/v1/vetting/full', { ...base, messages: [{ role: 'system', content: 'Be nice.' }, ...base.messages] }, { code: 'invalid_body', param: 'messages[0].role' });
    await expectRejected('/v1/vetting/full', { ...base, messages: [...base.messages, { role: 'assistant', content: 'ok' }] }, { code: 'invalid_body', param: 'messages[1].role' });
    await expectRejected('/v1/vetting/full', { ...base, prompts: { chatSystemPrompt: 'enc::v1.12345678.AAAA' } }, { code: 'invalid_body', param: 'prompts.chatSystemPrompt' });
    await expectRejected('/v1/vetting/full', { ...base, surprise: 1 }, { code: 'invalid_body', param: 'surprise' });
  });

  test('a key must be allowed both models the caller names', async () => {
    const limited = await gateway.createKey({ scopes: ['model:request'], allowedModels: ['tutor-text'] });
    const response = await post('/v1/vetting/full', fullBody(), limited);
    assert.equal(response.status, 403);
    assert.equal(response.body.error.code, 'model_not_allowed');
    assert.equal(response.body.error.param, 'config.verificationModel.modelId');
    assert.equal(drafter.calls.length, 0);
  });

  test('errors never carry the answer key', async () => {
    const base = fullBody();
    const error = await expectRejected('/v1/vetting/full', { ...base, config: { ...base.config, maxVerificationAttempts: 99 } }, { code: 'invalid_body' });
    assert.doesNotMatch(JSON.stringify(error), /Paris|Seine/);
  });
});

describe('VETTING configuration', () => {
  test('a configured default model that is not a chat model stops start-up, naming the setting', async () => {
    for (const setting of ['verificationModel', 'defaultModel']) {
      await assert.rejects(
        startTestGateway({ configFile: { ...CONFIG, vetting: { [setting]: 'embedder' } }, providers: [drafter, verifier], routes: [] }),
        new RegExp(`vetting\\.${setting}`),
      );
    }
  });
});
