import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import type { RouteModule } from '../src/server/app.js';

/*
 * x-should-retry through the official openai SDK, with its retries on: the gateway counts the
 * attempts it receives. Without the header the SDK resends every 409, 429 and 5xx, waiting out
 * whatever Retry-After says: hours for a daily cap, and a provider that refuses the gateway's
 * own credential would be asked three times for nothing.
 */

const UPSTREAM_KEY = 'sk-test-fake-openai-should-retry';

describe('x-should-retry: the official SDK resends only what a retry can cure', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let attempts = 0;
  const countAttempts: RouteModule = (app) => {
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.url === '/v1/chat/completions') attempts += 1;
      done();
    });
  };
  const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 2, timeout: 20_000 });
  const ask = (client: OpenAI) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });

  /** The SDK's error of a call that must fail, with the attempts the gateway received for it. */
  async function failure(call: () => Promise<unknown>): Promise<{ error: InstanceType<typeof OpenAI.APIError>; attempts: number }> {
    attempts = 0;
    try {
      await call();
    } catch (error) {
      assert.ok(error instanceof OpenAI.APIError, `expected an APIError, got ${String(error)}`);
      return { error, attempts };
    }
    assert.fail('the call succeeded');
  }

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: UPSTREAM_KEY },
      routes: [...ROUTE_MODULES, countAttempts],
    });
  });
  beforeEach(() => fake.scriptChat({ kind: 'reply', text: 'Hello.', usage: { promptTokens: 5, completionTokens: 4 } }));
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('a spent daily token cap (429, Retry-After hours away): one attempt, x-should-retry false', async () => {
    const client = sdk(await gateway.createKey({ scopes: ['model:request'], dailyTokens: 1 }));
    // Spends 9 tokens of the 1-token cap (or, where a cap refuses what its reservation does not fit, is refused already).
    await ask(client).catch(() => undefined);
    const { error, attempts: made } = await failure(() => ask(client));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'daily_token_cap_exceeded');
    assert.equal(error.headers?.get('x-should-retry'), 'false');
    assert.equal(made, 1);
  });

  test('the provider refuses the gateway\'s own credential (502): one attempt, x-should-retry false', async () => {
    fake.scriptChat({ kind: 'error', status: 401, message: 'Incorrect API key provided.' });
    const client = sdk(await gateway.createKey({ scopes: ['model:request'] }));
    const { error, attempts: made } = await failure(() => ask(client));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'provider_error');
    assert.equal(error.headers?.get('x-should-retry'), 'false');
    assert.equal(made, 1);
  });

  test('a caller\'s mistake (403 model_not_allowed): one attempt, x-should-retry false', async () => {
    const key = await gateway.createKey({ scopes: ['model:request'], allowedModels: ['gpt-4o'] });
    const { error, attempts: made } = await failure(() => ask(sdk(key)));
    assert.equal(error.code, 'model_not_allowed');
    assert.equal(error.headers?.get('x-should-retry'), 'false');
    assert.equal(made, 1);
  });

  test('a provider failure (upstream 500 → 502): x-should-retry true, and the SDK tries again', async () => {
    fake.scriptChat({ kind: 'error', status: 500, message: 'The server had an error.' });
    const client = sdk(await gateway.createKey({ scopes: ['model:request'] }));
    const { error, attempts: made } = await failure(() => ask(client));
    assert.equal(error.status, 502);
    assert.equal(error.headers?.get('x-should-retry'), 'true');
    assert.equal(made, 3);
  });

  test('the per-minute limit (429 rate_limit_exceeded) says a retry may help', async () => {
    const key = await gateway.createKey({ scopes: ['model:request'], rpm: 1 });
    const send = () =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
      });
    assert.equal((await send()).status, 200);
    const limited = await send();
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limit_exceeded');
    assert.equal(limited.headers.get('x-should-retry'), 'true');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });
});
