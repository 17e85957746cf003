import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { RecordTap } from './helpers/records.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';

const USAGE = { promptTokens: 5, completionTokens: 4 };
const CARD = '4111 1111 1111 1111';

/** Guardrails of every action, attached by project, by model and to all traffic. */
const GUARDRAILS = [
  { name: 'no-pii', check: 'pii', stage: ['input', 'output'], action: 'mask', apply: { projects: ['masked'] }, options: { kinds: ['email', 'card'] } },
  { name: 'no-secrets', check: 'secrets', stage: ['input'], action: 'block', apply: { projects: ['blocked'] } },
  { name: 'codename', check: 'keywords', stage: ['output'], action: 'block', window: 16, apply: { projects: ['blocked'] }, options: { words: ['Project Nightingale'] } },
  { name: 'watch', check: 'regex', stage: ['input'], action: 'log', apply: { models: ['gpt-4o-mini'] }, options: { patterns: ['ticket-\\d+'] } },
];

describe('guardrails on the call path', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  const tap = new RecordTap();
  const keys: Record<string, string> = {};

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_API_KEY: 'sk-upstream-guardrails-00000000000', OPENAI_BASE_URL: `${fake.server.url}/v1` },
      configFile: { guardrails: GUARDRAILS },
      routes: [...ROUTE_MODULES, tap.routes],
    });
    for (const project of ['masked', 'blocked', 'plain']) keys[project] = await gateway.createKey({ projectId: project });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const client = (project: string) => new OpenAI({ apiKey: keys[project]!, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const lastUpstreamText = () => JSON.stringify(fake.server.requests.at(-1)?.json);

  test('mask: the model never sees the email or card, nor the caller the card the model wrote back', async () => {
    fake.scriptChat({ kind: 'reply', text: `Your card ${CARD} is noted.`, usage: USAGE });
    const { data, response } = await client('masked')
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `I am ada@example.org, card ${CARD}` }] })
      .withResponse();
    const upstream = lastUpstreamText();
    assert.ok(upstream.includes('I am [email], card [card]'), upstream);
    assert.ok(!upstream.includes('ada@example.org') && !upstream.includes(CARD));
    assert.equal(data.choices[0]!.message.content, 'Your card [card] is noted.');
    assert.equal(response.headers.get('x-modelgate-guardrails'), 'no-pii=masked');
    const record = await tap.wait(response.headers.get('x-request-id')!);
    const verdicts = (record.extra as { guardrails: { guardrail: string; stage: string; outcome: string; matched: boolean; latencyMs: number }[] }).guardrails;
    assert.deepEqual(
      verdicts.map(({ guardrail, stage, outcome, matched }) => ({ guardrail, stage, outcome, matched })),
      [
        { guardrail: 'no-pii', stage: 'input', outcome: 'masked', matched: true },
        { guardrail: 'no-pii', stage: 'output', outcome: 'masked', matched: true },
      ],
    );
    assert.ok(verdicts.every((verdict) => typeof verdict.latencyMs === 'number'));
    assert.ok(!JSON.stringify(verdicts).includes('4111'), 'the record names no matched text');
  });

  test('block on input: 400 guardrail_blocked naming the guardrail, the provider never called', async () => {
    const before = fake.server.requests.length;
    const secret = ['sk-', 'proj-', 'Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2'].join('');
    await assert.rejects(
      client('blocked').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `my key is ${secret}` }] }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError);
        assert.equal(error.status, 400);
        assert.equal(error.code, 'guardrail_blocked');
        assert.match(error.message, /"no-secrets"/);
        assert.ok(!error.message.includes(secret));
        assert.equal(error.headers.get('x-modelgate-guardrails'), 'no-secrets=blocked');
        return true;
      },
    );
    assert.equal(fake.server.requests.length, before);
  });

  test('block on output: 502 guardrail_blocked, the answer withheld', async () => {
    fake.scriptChat({ kind: 'reply', text: 'The plan is Project Nightingale.', usage: USAGE });
    await assert.rejects(client('blocked').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'what is the plan?' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
      assert.equal(error.code, 'guardrail_blocked');
      assert.equal((error.error as { type?: string }).type, 'api_error');
      assert.ok(!error.message.includes('Nightingale'));
      return true;
    });
  });

  test('a stream blocked mid-way: the text before the window went out, then the format\'s error event; the matched words never', async () => {
    const deltas = ['Sure. ', 'Here is a long enough opening sentence ', 'before the plan: ', 'Project ', 'Night', 'ingale', ' starts soon.'];
    fake.scriptChat({ kind: 'stream-paced', deltas, intervalMs: 5, usage: USAGE });
    const { data: stream, response } = await client('blocked').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'plan?' }] }).withResponse();
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError);
        assert.match(error.message, /"codename"/);
        return true;
      },
    );
    // What went out lies a window before the match (how much depends on how the frames came).
    assert.ok('Sure. Here is a long enough opening sentence before the plan: '.startsWith(text), text);
    const record = await tap.wait(response.headers.get('x-request-id')!);
    assert.equal(record.errorCode, 'guardrail_blocked');
    const verdicts = (record.extra as { guardrails: { guardrail: string; stage: string; outcome: string }[] }).guardrails;
    assert.deepEqual(verdicts.map(({ guardrail, stage, outcome }) => `${guardrail}:${stage}:${outcome}`), ['no-secrets:input:passed', 'codename:output:blocked']);
  });

  test('a stream that passes arrives whole, held-back tail included', async () => {
    const deltas = ['One ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven.'];
    fake.scriptChat({ kind: 'stream', deltas, usage: USAGE });
    const stream = await client('blocked').chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'count' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, deltas.join(''));
  });

  test('log: recorded and in the header, the call unchanged; a model with no guardrail carries no header', async () => {
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: USAGE });
    const logged = await client('plain').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'about ticket-42' }] }).withResponse();
    assert.equal(logged.response.headers.get('x-modelgate-guardrails'), 'watch=logged');
    assert.ok(lastUpstreamText().includes('about ticket-42'));
    fake.scriptChat({ kind: 'reply', text: 'ok', usage: USAGE });
    const plain = await client('plain').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'ada@example.org ticket-42' }] }).withResponse();
    assert.equal(plain.response.headers.get('x-modelgate-guardrails'), null);
    const record = await tap.wait(plain.response.headers.get('x-request-id')!);
    assert.equal((record.extra as { guardrails?: unknown } | null)?.guardrails, undefined);
  });

  test('embeddings input is guarded too', async () => {
    await client('masked').embeddings.create({ model: 'text-embedding-3-small', input: ['write to ada@example.org'] });
    assert.ok(lastUpstreamText().includes('write to [email]'), lastUpstreamText());
  });

  test('on the Messages API: a blocked input is its 400 error, a stream blocked mid-way its error event', async () => {
    const anthropic = new Anthropic({ apiKey: keys.blocked!, baseURL: gateway.url, maxRetries: 0 });
    const secret = ['sk-', 'proj-', 'Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2'].join('');
    await assert.rejects(anthropic.messages.create({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: `key ${secret}` }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError);
      assert.match(error.message, /The guardrail \\?"no-secrets\\?" blocked/);
      return true;
    });
    fake.scriptChat({ kind: 'stream', deltas: ['The plan: ', 'Project Nightingale', '.'], usage: USAGE });
    const stream = anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'plan?' }] });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    await assert.rejects(stream.finalMessage(), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError, String(error));
      assert.match(error.message, /codename/);
      return true;
    });
    assert.ok(!text.includes('Nightingale'), text);
  });

  test('verdicts are counted in the metrics', async () => {
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    assert.match(text, /modelgate_guardrail_verdicts_total\{guardrail="no-pii",stage="input",outcome="masked"\} [1-9]/);
    assert.match(text, /modelgate_guardrail_verdicts_total\{guardrail="codename",stage="output",outcome="blocked"\} [1-9]/);
  });

  test('admin API: the list, and a dry run on a sample text that calls no model', async () => {
    const listed = await gateway.admin('GET', '/admin/v1/guardrails');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.data.map((entry: { name: string }) => entry.name), ['no-pii', 'no-secrets', 'codename', 'watch']);
    assert.equal(listed.body.data[0].on_error, 'closed');
    const before = fake.server.requests.length;
    const masked = await gateway.admin('POST', '/admin/v1/guardrails/no-pii/test', { text: 'mail ada@example.org' });
    assert.equal(masked.status, 200);
    assert.equal(masked.body.outcome, 'masked');
    assert.equal(masked.body.matched, true);
    assert.equal(masked.body.masked_text, 'mail [email]');
    const passed = await gateway.admin('POST', '/admin/v1/guardrails/codename/test', { text: 'nothing here', stage: 'output' });
    assert.equal(passed.body.outcome, 'passed');
    assert.equal(passed.body.matched, false);
    assert.equal(fake.server.requests.length, before);
    const unknown = await gateway.admin('POST', '/admin/v1/guardrails/nope/test', { text: 'x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'not_found');
  });

  test('on the Responses API (the provider\'s own, passed through): the masked input is what is sent, the answer masked', async () => {
    fake.scriptResponses({ kind: 'text', deltas: ['Card ', CARD, ' kept.'], usage: USAGE });
    const response = await client('masked').responses.create({ model: 'gpt-4o', input: `I am ada@example.org` });
    const upstream = fake.server.requests.at(-1)!;
    assert.equal(upstream.path, '/v1/responses');
    assert.ok(upstream.rawBody.toString('utf8').includes('I am [email]'), upstream.rawBody.toString('utf8'));
    assert.ok(!upstream.rawBody.toString('utf8').includes('ada@example.org'));
    assert.equal(response.output_text, 'Card [card] kept.');
  });
});
