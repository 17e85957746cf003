import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import pino from 'pino';
import { GatewayError } from '../src/errors/index.js';
import { FAULT_NOTICE_INTERVAL_MS, ProviderHealth, type ProviderFaultNotice } from '../src/providers/index.js';
import { mapUpstreamFailure } from '../src/providers/shared/upstream-errors.js';
import { transportError } from '../src/providers/shared/upstream-http.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';

/** What reaches the operator when a provider refuses the gateway's credential or cannot be reached. */

const refused = () => mapUpstreamFailure({ provider: 'openai', status: 401, upstreamMessage: 'Incorrect API key provided: sk-proj-…abcd' });
const unreachable = () => transportError(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), 'openai');

describe('ProviderHealth', () => {
  const tracker = () => {
    let now = 1_000_000;
    const counted: string[] = [];
    const notices: ProviderFaultNotice[] = [];
    const health = new ProviderHealth({ count: (provider, fault) => counted.push(`${provider}:${fault}`), notify: (notice) => notices.push(notice) }, () => now);
    return { health, counted, notices, advance: (ms: number) => (now += ms) };
  };

  test('a refused credential is told at once, then at most once a minute; every failure is counted', () => {
    const { health, counted, notices, advance } = tracker();
    health.observe('openai', refused());
    health.observe('openai', refused());
    advance(FAULT_NOTICE_INTERVAL_MS - 1);
    health.observe('openai', refused());
    assert.equal(notices.length, 1);
    assert.equal(counted.length, 3);
    advance(1);
    health.observe('openai', refused());
    assert.equal(notices.length, 2);
    assert.deepEqual({ ...notices[1], since: undefined }, { provider: 'openai', fault: 'credential_refused', failures: 4, since: undefined });
    assert.equal(health.view('openai').state, 'failing');
    assert.equal(health.view('openai').failures, 4);
  });

  test('an unreachable provider is told once it has been unreachable for a minute; an answer ends the fault', () => {
    const { health, notices, advance } = tracker();
    health.observe('openai', unreachable());
    advance(30_000);
    health.observe('openai', unreachable());
    assert.equal(notices.length, 0, 'half a minute is no news');
    assert.equal(health.view('openai').fault, 'unreachable');
    advance(30_000);
    health.observe('openai', unreachable());
    assert.equal(notices.length, 1);
    assert.equal(notices[0]!.fault, 'unreachable');
    health.observe('openai', mapUpstreamFailure({ provider: 'openai', status: 500, upstreamMessage: null }));
    assert.equal(health.view('openai').state, 'ok', 'a 500 is an answer: the provider is reachable');
    advance(1_000);
    health.observe('openai', unreachable());
    assert.equal(notices.length, 1, 'a new outage starts its minute again');
  });

  test('errors that are not the provider\'s fault change nothing', () => {
    const { health, counted } = tracker();
    health.observe('openai', new GatewayError('invalid_body', 'bad field'));
    health.observe('openai', new Error('a bug'));
    assert.equal(counted.length, 0);
    assert.equal(health.view('openai').state, 'ok');
  });
});

describe('a provider that refuses the gateway credential, through the gateway', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let client: OpenAI;
  const logLines: Record<string, unknown>[] = [];
  const SECRET = 'sk-proj-the-gateways-own-openai-key-0123456789';
  before(async () => {
    fake = await startOpenAIFake();
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter((text) => text.length > 0)) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: SECRET }, logger: pino({ level: 'warn' }, sink) });
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey(), maxRetries: 0 });
  });
  after(async () => {
    await gateway.close();
    await fake.close();
  });

  test('callers get the neutral 502; the operator gets one warning, a metric and modelgate status', async () => {
    for (let call = 0; call < 3; call += 1) {
      fake.failNext('/v1/chat/completions', 401, `Incorrect API key provided: ${SECRET}`);
      const error = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((caught: unknown) => caught);
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 502);
      assert.equal(error.code, 'provider_error');
    }
    const warnings = logLines.filter((line) => line.fault === 'credential_refused');
    assert.equal(warnings.length, 1, 'once per provider per minute');
    assert.equal(warnings[0]!.level, 40);
    assert.equal(warnings[0]!.provider, 'openai');
    assert.match(String(warnings[0]!.msg), /provider openai refused the gateway's credential/);
    assert.ok(!JSON.stringify(logLines).includes(SECRET), 'no secret in the process log');

    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
    assert.match(text, /modelgate_provider_faults_total\{provider="openai",fault="credential_refused"\} 3/);

    const status = await gateway.admin('GET', '/admin/v1/status');
    assert.equal(status.status, 200);
    assert.equal(status.body.status, 'degraded');
    const openai = status.body.providers.find((provider: { name: string }) => provider.name === 'openai');
    assert.equal(openai.state, 'failing');
    assert.equal(openai.fault, 'credential_refused');
    assert.equal(openai.failures, 3);

    // The next answer ends the fault.
    fake.scriptChat({ kind: 'reply', text: 'fine', usage: { promptTokens: 1, completionTokens: 1 } });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
    const after = await gateway.admin('GET', '/admin/v1/status');
    assert.equal(after.body.providers.find((provider: { name: string }) => provider.name === 'openai').state, 'ok');
    assert.equal(after.body.status, 'ok');
  });
});
