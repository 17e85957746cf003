import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { RecordTap } from './helpers/records.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, blockedPromptResponse, startFakeGemini, textResponse, type FakeGemini } from './fakes/gemini.js';

/** Parsed JSON bodies: read loosely, every field used is asserted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

/*
 * Both VETTING endpoints end to end: the official openai SDK → the gateway → the real
 * provider adapters → fake vendor upstreams, drafting on one provider and verifying on
 * another, asserting what each upstream received (the structured-output request of
 * docs/vetting.md in each vendor's own form) and what the caller got.
 */

const FALLBACK = 'Let us work through it step by step. What have you tried so far?';
const DRAFTER_OPENAI = 'gpt-4o-mini';
const VERIFIER_ANTHROPIC = 'claude-haiku-4-5';
const GEMINI = 'gemini-2.5-flash';

let openai: OpenAIFake;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gateway: TestGateway;
let client: OpenAI;
const tap = new RecordTap();

before(async () => {
  [openai, anthropic, gemini] = await Promise.all([startOpenAIFake(), startFakeAnthropic(), startFakeGemini()]);
  gateway = await startTestGateway({
    env: {
      OPENAI_BASE_URL: `${openai.server.url}/v1`,
      OPENAI_API_KEY: 'sk-fake-openai-0123456789',
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
      GEMINI_BASE_URL: gemini.url,
      GEMINI_API_KEY: FAKE_GEMINI_KEY,
    },
    configFile: { vetting: { verificationModel: VERIFIER_ANTHROPIC, fallbackMessage: FALLBACK } },
    routes: [...ROUTE_MODULES, tap.routes],
  });
  client = new OpenAI({ apiKey: await gateway.createKey({ scopes: ['model:request'] }), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await gateway.close();
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
});
beforeEach(() => {
  openai.server.requests.length = 0;
  anthropic.requests.length = 0;
  gemini.requests.length = 0;
});

const verdictJson = (passed: boolean, reason: string, requiresAttention = false) =>
  JSON.stringify({ passed, reason, requires_attention: requiresAttention });

/** Anthropic's answer to the forced vetting_verdict tool: a tool_use block whose input is the verdict. */
function anthropicVerdict(passed: boolean, reason: string, requiresAttention = false) {
  anthropic.reply({
    message: {
      content: [{ type: 'tool_use', id: 'toolu_01Verdict', name: 'vetting_verdict', input: { passed, reason, requires_attention: requiresAttention } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 300, output_tokens: 40 },
    },
  });
}

const chatRequests = (fake: OpenAIFake) => fake.server.requests.filter((request) => request.path.startsWith('/v1/chat/completions'));
const geminiGenerate = () => gemini.requests.filter((request) => request.path.includes(':generateContent'));

const fullBody = (chatModel: string, verificationModel: string, extra: Record<string, unknown> = {}) => ({
  mode: 'vetting',
  config: { chatModel: { modelId: chatModel, maxTokens: 256 }, verificationModel: { modelId: verificationModel } },
  prompts: {},
  context: {
    sessionId: 'sess-9',
    items: [{ question: { text: 'What is 6 times 7?' }, answerKey: { correctAnswer: '42', keyConcepts: ['multiplication table of 7'] } }],
  },
  messages: [{ role: 'user', content: 'What is 6 times 7? Just give me the number.' }],
  ...extra,
});

describe('POST /v1/chat/vetting: drafting on OpenAI, verifying on Anthropic', () => {
  test('passes on the first attempt; Anthropic is forced to call the vetting_verdict tool', async () => {
    openai.scriptChat({ kind: 'reply', text: 'What do you get if you add 7 six times?', usage: { promptTokens: 25, completionTokens: 11 } });
    anthropicVerdict(true, 'Guides without giving the result.');
    const response = (await client.post('/chat/vetting', {
      body: {
        model: DRAFTER_OPENAI,
        messages: [{ role: 'system', content: 'You are a maths tutor.' }, { role: 'user', content: 'What is 6 times 7?' }],
        vettingConfig: { systemPrompt: 'Never state the product.' },
      },
    })) as Loose;

    assert.equal(response.choices[0].message.content, 'What do you get if you add 7 six times?');
    assert.deepEqual(response.vetting_info, { attemptCount: 1, stopReason: 'VERIFICATION_PASSED', lastFailureReason: null });
    assert.deepEqual(response.usage, { prompt_tokens: 325, completion_tokens: 51, total_tokens: 376 });

    const drafts = chatRequests(openai);
    assert.equal(drafts.length, 1);
    assert.equal(drafts[0]!.json.model, DRAFTER_OPENAI);
    assert.equal(drafts[0]!.json.response_format, undefined, 'the draft is free text');
    assert.deepEqual(drafts[0]!.json.messages[0], { role: 'system', content: 'You are a maths tutor.' });

    assert.equal(anthropic.requests.length, 1);
    const verification = anthropic.lastBody();
    assert.equal(verification.model, VERIFIER_ANTHROPIC);
    assert.deepEqual(verification.tool_choice, { type: 'tool', name: 'vetting_verdict' });
    const tool = verification.tools.find((candidate: { name: string }) => candidate.name === 'vetting_verdict');
    assert.deepEqual(tool.input_schema.required, ['passed', 'reason', 'requires_attention']);
    assert.match(JSON.stringify(verification.system), /Never state the product\./);
    assert.match(JSON.stringify(verification.messages), /What do you get if you add 7 six times\?/);
  });

  test('never passing: exactly N drafts on OpenAI and N verifications on Anthropic, usage summed, fallback', async () => {
    openai.scriptChat({ kind: 'reply', text: 'It is 42.', usage: { promptTokens: 20, completionTokens: 5 } });
    anthropicVerdict(false, 'The draft gives the product away.');
    const response = (await client.post('/chat/vetting', {
      body: { model: DRAFTER_OPENAI, messages: [{ role: 'user', content: '6 x 7?' }], vettingConfig: { maxAttempts: 3 } },
    })) as Loose;
    assert.equal(response.vetting_info.stopReason, 'MAX_ATTEMPTS_REACHED');
    assert.equal(response.vetting_info.attemptCount, 3);
    assert.equal(response.choices[0].message.content, FALLBACK);
    assert.equal(chatRequests(openai).length, 3);
    assert.equal(anthropic.requests.length, 3);
    assert.deepEqual(response.usage, { prompt_tokens: 3 * 20 + 3 * 300, completion_tokens: 3 * 5 + 3 * 40, total_tokens: 3 * 25 + 3 * 340 });
    // the redrafts carried the verifier's reason as feedback
    assert.match(JSON.stringify(chatRequests(openai)[2]!.json.messages), /The draft gives the product away\./);
  });

  test('free text from the verifier ("verdict: pass") is not a verdict: VERIFICATION_ERROR, fallback', async () => {
    openai.scriptChat({ kind: 'reply', text: 'It is 42.', usage: { promptTokens: 20, completionTokens: 5 } });
    anthropic.reply({ message: { content: [{ type: 'text', text: 'Verdict: pass. {"passed": true}' }], stop_reason: 'end_turn' } });
    const response = (await client.post('/chat/vetting', { body: { model: DRAFTER_OPENAI, messages: [{ role: 'user', content: '6 x 7?' }] } })) as Loose;
    assert.equal(response.vetting_info.stopReason, 'VERIFICATION_ERROR');
    assert.equal(response.choices[0].message.content, FALLBACK);
  });

  test('an upstream failure is a 200 with the stop reason, and never reveals the provider’s status', async () => {
    openai.scriptChat({ kind: 'error', status: 500, message: 'The server had an error while processing your request.' });
    const generation = (await client.post('/chat/vetting', { body: { model: DRAFTER_OPENAI, messages: [{ role: 'user', content: 'hi' }] } })) as Loose;
    assert.equal(generation.vetting_info.stopReason, 'GENERATION_ERROR');
    assert.equal(generation.choices[0].message.content, FALLBACK);
    assert.equal(anthropic.requests.length, 0);

    openai.scriptChat({ kind: 'reply', text: 'A hint.', usage: { promptTokens: 5, completionTokens: 2 } });
    anthropic.reply({ error: 'authentication_error', message: 'invalid x-api-key' });
    const verification = (await client.post('/chat/vetting', { body: { model: DRAFTER_OPENAI, messages: [{ role: 'user', content: 'hi' }] } })) as Loose;
    assert.equal(verification.vetting_info.stopReason, 'VERIFICATION_ERROR');
    assert.equal(verification.choices[0].message.content, FALLBACK);
    // 401 as a word: the random request id in the body may hold those digits (it did, once in CI).
    assert.doesNotMatch(JSON.stringify(verification), /\b401\b|x-api-key|anthropic/i);
  });
});

describe('POST /v1/vetting/full across providers', () => {
  test('drafting on Gemini, verifying on OpenAI with response_format json_schema vetting_verdict', async () => {
    gemini.reply('chat', { response: textResponse('Try counting by sevens: 7, 14, 21… where do you land after six steps?', { usage: { promptTokens: 80, completionTokens: 20 } }) });
    openai.scriptChat({ kind: 'reply', text: verdictJson(true, 'A guiding question.'), usage: { promptTokens: 400, completionTokens: 30 } });
    const { data, response: http } = await client.post('/vetting/full', { body: fullBody(GEMINI, DRAFTER_OPENAI) }).withResponse();
    const response = data as Loose;

    assert.equal(response.verification.stopReason, 'VERIFICATION_PASSED');
    assert.equal(response.result.content, 'Try counting by sevens: 7, 14, 21… where do you land after six steps?');
    assert.deepEqual(response.usage, { chatTokens: 100, verificationTokens: 430, totalTokens: 530 });
    assert.equal(response.metadata.chatModelUsed, GEMINI);
    assert.equal(response.metadata.verificationModelUsed, DRAFTER_OPENAI);
    assert.equal(response.metadata.sessionId, 'sess-9');

    const draft = geminiGenerate();
    assert.equal(draft.length, 1);
    assert.match(draft[0]!.path, new RegExp(`/models/${GEMINI}:generateContent`));
    const draftRequest = JSON.stringify(draft[0]!.json);
    assert.match(draftRequest, /What is 6 times 7\?/);
    assert.doesNotMatch(draftRequest, /multiplication table of 7|\b42\b/, 'the drafting model never sees the answer key');
    assert.equal(draft[0]!.json.generationConfig.maxOutputTokens, 256);

    const verifications = chatRequests(openai);
    assert.equal(verifications.length, 1);
    // Checked against docs/vetting.md and OpenAI's strict structured outputs (every property
    // required, no others), not against the gateway's own constant.
    const format = verifications[0]!.json.response_format;
    assert.equal(format.type, 'json_schema');
    assert.equal(format.json_schema.name, 'vetting_verdict');
    assert.equal(format.json_schema.strict, true);
    const schema = format.json_schema.schema;
    assert.equal(schema.type, 'object');
    assert.deepEqual(
      Object.fromEntries(Object.entries<{ type: string }>(schema.properties).map(([name, property]) => [name, property.type])),
      { passed: 'boolean', reason: 'string', requires_attention: 'boolean' },
    );
    assert.deepEqual(schema.required, ['passed', 'reason', 'requires_attention']);
    assert.equal(schema.additionalProperties, false);
    assert.match(JSON.stringify(verifications[0]!.json.messages), /Correct answer \(must not be disclosed\): 42/);

    const record = await tap.wait(http.headers.get('x-request-id')!);
    assert.equal(record.mode, 'vetting');
    assert.equal(record.requestedModel, GEMINI);
    assert.equal(record.provider, 'gemini');
    assert.deepEqual(record.usage, { promptTokens: 480, completionTokens: 50, totalTokens: 530, cachedPromptTokens: 0 });
    assert.equal(record.extra?.verificationProvider, 'openai');
    assert.equal(record.extra?.stopReason, 'VERIFICATION_PASSED');
  });

  test('drafting on Anthropic, verifying on Gemini with responseMimeType and responseSchema; a safety flag stops it', async () => {
    anthropic.reply({ message: { content: [{ type: 'text', text: 'Let us think about groups of seven.' }], usage: { input_tokens: 60, output_tokens: 12 } } });
    gemini.reply('chat', { response: textResponse(verdictJson(false, 'The student sounds distressed.', true), { usage: { promptTokens: 200, completionTokens: 15 } }) });
    const response = (await client.post('/vetting/full', { body: fullBody(VERIFIER_ANTHROPIC, GEMINI) })) as Loose;

    assert.equal(response.verification.stopReason, 'SAFETY_TRIGGERED');
    assert.deepEqual(response.safety_signals, { requires_attention: true });
    assert.equal(response.result.content, FALLBACK);
    assert.equal(response.verification.attempts.length, 1);
    assert.equal(response.verification.attempts[0].requiresAttention, true);
    assert.deepEqual(response.usage, { chatTokens: 72, verificationTokens: 215, totalTokens: 287 });

    assert.equal(anthropic.requests.length, 1);
    assert.equal(anthropic.lastBody().tools, undefined, 'the draft is free text');
    const verification = geminiGenerate();
    assert.equal(verification.length, 1);
    const config = verification[0]!.json.generationConfig;
    assert.equal(config.responseMimeType, 'application/json');
    assert.deepEqual(Object.keys(config.responseSchema.properties).sort(), ['passed', 'reason', 'requires_attention']);
    assert.match(JSON.stringify(verification[0]!.json.systemInstruction), /Correct answer \(must not be disclosed\): 42/);
  });

  test('a draft stating the answer is rejected locally, and the answer key never reaches lastFailureReason', async () => {
    openai.scriptChat({ kind: 'reply', text: 'Easy: 6 × 7 = 42.', usage: { promptTokens: 30, completionTokens: 9 } });
    const response = (await client.post('/vetting/full', {
      body: fullBody(DRAFTER_OPENAI, VERIFIER_ANTHROPIC, { config: { chatModel: { modelId: DRAFTER_OPENAI }, verificationModel: { modelId: VERIFIER_ANTHROPIC }, maxVerificationAttempts: 2 } }),
    })) as Loose;
    assert.equal(response.verification.stopReason, 'MAX_ATTEMPTS_REACHED');
    assert.equal(response.result.content, FALLBACK);
    assert.equal(chatRequests(openai).length, 2);
    assert.equal(anthropic.requests.length, 0, 'no verification call was spent on a leaking draft');
    assert.deepEqual(
      response.verification.attempts.map((attempt: { checkedBy: string }) => attempt.checkedBy),
      ['local_check', 'local_check'],
    );
    assert.doesNotMatch(response.verification.lastFailureReason, /42|multiplication/);
    assert.deepEqual(response.usage, { chatTokens: 78, verificationTokens: 0, totalTokens: 78 });
  });

  test('a provider safety block on the draft (Gemini blockReason) is SAFETY_TRIGGERED', async () => {
    gemini.reply('chat', { response: blockedPromptResponse('SAFETY') });
    const response = (await client.post('/vetting/full', { body: fullBody(GEMINI, DRAFTER_OPENAI) })) as Loose;
    assert.equal(response.verification.stopReason, 'SAFETY_TRIGGERED');
    assert.deepEqual(response.safety_signals, { requires_attention: true });
    assert.equal(response.result.content, FALLBACK);
    assert.equal(chatRequests(openai).length, 0);
  });

  test('chat mode on Anthropic: one call, no verification', async () => {
    anthropic.reply({ message: { content: [{ type: 'text', text: 'Hi! What are we working on today?' }], usage: { input_tokens: 40, output_tokens: 10 } } });
    const response = (await client.post('/vetting/full', {
      body: { mode: 'chat', config: { chatModel: { modelId: VERIFIER_ANTHROPIC } }, prompts: {}, messages: [{ role: 'user', content: 'hello' }] },
    })) as Loose;
    assert.equal(response.verification, null);
    assert.equal(response.metadata.verificationModelUsed, null);
    assert.equal(response.result.content, 'Hi! What are we working on today?');
    assert.deepEqual(response.usage, { chatTokens: 50, verificationTokens: 0, totalTokens: 50 });
    assert.equal(anthropic.requests.length, 1);
    assert.equal(chatRequests(openai).length + geminiGenerate().length, 0);
  });
});
