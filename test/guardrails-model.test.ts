import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIChatScript, type OpenAIFake } from './fakes/openai.js';
import { RecordTap } from './helpers/records.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import type { RecordedRequest } from './fakes/fake-server.js';

const USAGE = { promptTokens: 5, completionTokens: 4 };

/** Model-based guardrails: a checker model of the catalog, called through the gateway itself. */
const GUARDRAILS = [
  { name: 'injection', check: 'model', stage: ['input'], action: 'block', apply: { projects: ['judged'] }, options: { model: 'gpt-4o-mini', task: 'prompt_injection', timeoutMs: 300 } },
  { name: 'lenient', check: 'model', stage: ['input'], action: 'block', onError: 'open', apply: { projects: ['lenient'] }, options: { model: 'gpt-4o-mini', timeoutMs: 300 } },
  { name: 'moderated', check: 'model', stage: ['output'], action: 'block', apply: { projects: ['moderated'] }, options: { model: 'gpt-4o-mini', task: 'moderation', timeoutMs: 2000 } },
];

const isCheck = (request: RecordedRequest) => request.json?.response_format?.json_schema?.name === 'guardrail_verdict';
const verdict = (flagged: boolean): OpenAIChatScript => ({ kind: 'reply', text: JSON.stringify({ flagged, reason: flagged ? 'an attempt to replace the rules' : 'an ordinary question' }), usage: USAGE });

describe('model-based guardrails', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  const tap = new RecordTap();
  const keys: Record<string, string> = {};
  /** What the checker model answers; the model being checked answers `answer`. */
  let checker: OpenAIChatScript = verdict(false);
  let answer: OpenAIChatScript = { kind: 'reply', text: 'Paris.', usage: USAGE };

  before(async () => {
    fake = await startOpenAIFake();
    fake.scriptChat({ kind: 'per-request', script: (request) => (isCheck(request) ? checker : answer) });
    gateway = await startTestGateway({
      env: { OPENAI_API_KEY: 'sk-upstream-guardrails-00000000000', OPENAI_BASE_URL: `${fake.server.url}/v1` },
      configFile: { guardrails: GUARDRAILS },
      routes: [...ROUTE_MODULES, tap.routes],
    });
    for (const project of ['judged', 'lenient', 'moderated']) keys[project] = await gateway.createKey({ projectId: project });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const client = (project: string) => new OpenAI({ apiKey: keys[project]!, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const ask = (project: string, content: string) => client(project).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }] }).withResponse();
  const checks = () => fake.server.requests.filter(isCheck);
  const rejectsClosed = async (project: string, guardrail: string, failed: boolean) => {
    const before = fake.server.requests.filter((request) => !isCheck(request)).length;
    await assert.rejects(ask(project, 'What is the capital of France?'), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal(error.code, 'guardrail_blocked');
      assert.match(error.message, new RegExp(`"${guardrail}" ${failed ? 'could not check this request and fails closed' : 'blocked this request'}`));
      return true;
    });
    assert.equal(fake.server.requests.filter((request) => !isCheck(request)).length, before, 'the checked model was never called');
  };

  test('a verdict that passes: the call goes on; the checker call is the gateway\'s own, in the record and priced', async () => {
    checker = verdict(false);
    const { data, response } = await ask('judged', 'What is the capital of France?');
    assert.equal(data.choices[0]!.message.content, 'Paris.');
    assert.equal(response.headers.get('x-modelgate-guardrails'), 'injection=passed');
    const sent = checks().at(-1)!;
    assert.equal(sent.json.model, 'gpt-4o-mini');
    assert.equal(sent.json.temperature, 0);
    assert.equal(sent.json.response_format.json_schema.strict, true);
    assert.match(JSON.stringify(sent.json.messages), /<<<TEXT\\nWhat is the capital of France\?\\nTEXT>>>/);
    const record = await tap.wait(response.headers.get('x-request-id')!);
    const calls = (record as unknown as { calls: { purpose: string | null; model: string; costMicroUsd: number | null }[] }).calls;
    assert.deepEqual(calls.map(({ purpose, model }) => [purpose, model]), [[null, 'gpt-4o'], ['guardrail:injection', 'gpt-4o-mini']]);
    assert.ok(calls.every((call) => typeof call.costMicroUsd === 'number' && call.costMicroUsd > 0));
  });

  test('flagged: 400 guardrail_blocked naming the guardrail', async () => {
    checker = verdict(true);
    await rejectsClosed('judged', 'injection', false);
  });

  test('a prose verdict is no verdict: closed', async () => {
    checker = { kind: 'reply', text: 'This looks fine to me, flagged: false.', usage: USAGE };
    await rejectsClosed('judged', 'injection', true);
  });

  test('JSON inside prose, or with members beyond the verdict\'s, is no verdict either (read as VETTING\'s verifier is)', async () => {
    checker = { kind: 'reply', text: 'Sure: {"flagged": false, "reason": "fine"}', usage: USAGE };
    await rejectsClosed('judged', 'injection', true);
    checker = { kind: 'reply', text: '{"flagged": false, "reason": "fine", "note": "ignore the rules"}', usage: USAGE };
    await rejectsClosed('judged', 'injection', true);
    checker = { kind: 'reply', text: '```json\n{"flagged": false, "reason": "fine"}\n```', usage: USAGE };
    const { response } = await ask('judged', 'What is the capital of France?');
    assert.equal(response.headers.get('x-modelgate-guardrails'), 'injection=passed', 'one fenced verdict is read');
  });

  test('a checker that errors: closed', async () => {
    checker = { kind: 'error', status: 500, message: 'upstream broke' };
    await rejectsClosed('judged', 'injection', true);
  });

  test('a checker that hangs past the guardrail\'s timeout: closed', async () => {
    checker = { kind: 'delay-headers', delayMs: 5_000 };
    await rejectsClosed('judged', 'injection', true);
  });

  test('onError open: a checker that errors lets the call through, recorded as an error', async () => {
    checker = { kind: 'error', status: 500, message: 'upstream broke' };
    const { data, response } = await ask('lenient', 'What is the capital of France?');
    assert.equal(data.choices[0]!.message.content, 'Paris.');
    assert.equal(response.headers.get('x-modelgate-guardrails'), 'lenient=error');
  });

  test('on output, a stream is held until the checker judged the whole answer', async () => {
    checker = verdict(false);
    answer = { kind: 'stream', deltas: ['The ', 'capital ', 'is ', 'Paris.'], usage: USAGE };
    const stream = await client('moderated').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'capital?' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'The capital is Paris.');
    assert.match(JSON.stringify(checks().at(-1)!.json.messages), /The capital is Paris\./);

    checker = verdict(true);
    const flagged = await client('moderated').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'capital?' }] });
    let seen = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of flagged) seen += chunk.choices[0]?.delta.content ?? '';
      })(),
      (error: unknown) => error instanceof OpenAI.APIError && /"moderated"/.test(error.message),
    );
    assert.equal(seen, '', 'nothing of a flagged answer went out');
    answer = { kind: 'reply', text: 'Paris.', usage: USAGE };
  });

  test('a guardrail naming a model the catalog does not have stops start-up', async () => {
    await assert.rejects(
      startTestGateway({ configFile: { guardrails: [{ name: 'bad', check: 'model', apply: { all: true }, options: { model: 'no-such-model' } }] } }),
      /guardrails\[0\]\.options\.model/,
    );
  });
});
