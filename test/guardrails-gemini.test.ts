import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI } from '@google/genai';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { FAKE_GEMINI_KEY, startFakeGemini, textFrames, textResponse, type FakeGemini } from './fakes/gemini.js';

const USAGE = { promptTokens: 20, completionTokens: 9 };
const FAKE_KEY = `sk-proj-${'FAKEfake00'.repeat(4)}`;

/** The Gemini API surface, on a Google model (the body passed through): the same guardrails as every other. */
const GUARDRAILS = [
  { name: 'no-pii', check: 'pii', stage: ['input', 'output'], action: 'mask', window: 32, apply: { projects: ['g'] }, options: { kinds: ['email'] } },
  { name: 'no-secrets', check: 'secrets', stage: ['input'], action: 'block', apply: { projects: ['g'] } },
  { name: 'codename', check: 'keywords', stage: ['output'], action: 'block', window: 32, apply: { projects: ['g'] }, options: { words: ['Nightingale'] } },
];

describe('guardrails on the Gemini API', () => {
  let fake: FakeGemini;
  let gateway: TestGateway;
  let client: GoogleGenAI;

  before(async () => {
    fake = await startFakeGemini();
    gateway = await startTestGateway({ env: { GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: FAKE_GEMINI_KEY }, configFile: { guardrails: GUARDRAILS } });
    client = new GoogleGenAI({ apiKey: await gateway.createKey({ projectId: 'g' }), httpOptions: { baseUrl: gateway.url, retryOptions: { attempts: 1 } } });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const sentText = () => JSON.stringify(fake.last('generateContent')?.json ?? fake.last('streamGenerateContent')?.json);

  test('generateContent: the model gets the masked contents and system instruction, the caller the masked answer', async () => {
    fake.reply('chat', { response: textResponse('Write to bob@example.org.') });
    const response = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'I am ada@example.org', config: { systemInstruction: 'Reply to carol@example.org' } });
    const sent = JSON.stringify(fake.last('generateContent')!.json);
    assert.ok(sent.includes('I am [email]') && sent.includes('Reply to [email]'), sent);
    assert.ok(!sent.includes('@example.org'));
    assert.equal(response.text, 'Write to [email].');
    assert.equal(response.sdkHttpResponse?.headers?.['x-modelgate-guardrails'], 'no-pii=masked,no-secrets=passed,codename=passed');
  });

  test('a secret in the contents: 400 guardrail_blocked in Google\'s error shape, the model never called', async () => {
    const before = fake.requests.length;
    await assert.rejects(client.models.generateContent({ model: 'gemini-2.5-flash', contents: `key ${FAKE_KEY}` }), (error: unknown) => {
      assert.ok(error instanceof ApiError, String(error));
      assert.equal(error.status, 400);
      assert.match(error.message, /no-secrets/);
      assert.ok(!error.message.includes(FAKE_KEY));
      return true;
    });
    assert.equal(fake.requests.length, before);
  });

  test('a stream: an email is masked within the held-back window, frames whole', async () => {
    fake.reply('chat', { frames: textFrames(['Sure, write ', 'to dave@exa', 'mple.org ', 'and wait for the answer to come.'], USAGE) });
    let text = '';
    for await (const chunk of await client.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'who?' })) text += chunk.text ?? '';
    assert.equal(text, 'Sure, write to [email] and wait for the answer to come.');
    assert.ok(!sentText().includes('dave'));
  });

  test('a stream blocked mid-way ends with an error; the word never went out', async () => {
    fake.reply('chat', { frames: textFrames(['An opening sentence that is long enough. ', 'The plan is Night', 'ingale, and more text follows it.'], USAGE) });
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of await client.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'plan?' })) text += chunk.text ?? '';
      })(),
      (error: unknown) => /codename/.test(String((error as Error).message)),
    );
    assert.ok(!text.includes('Night'), text);
  });
});
