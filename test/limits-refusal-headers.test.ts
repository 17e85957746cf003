import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const UPSTREAM = { OPENAI_API_KEY: 'sk-upstream-refusal-headers-0000000000' };
const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 };
const RPM = 5;

const LIMITERS: { name: string; env: Record<string, string>; skip: string | false }[] = [
  { name: 'in-process limiter', env: {}, skip: false },
  {
    name: 'Redis limiter',
    env: { REDIS_URL: REDIS_URL ?? '', MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:` },
    skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false,
  },
];

async function post(gateway: TestGateway, key: string, path: string, body: unknown): Promise<{ status: number; code: string | undefined; headers: Headers }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: answer.error?.code, headers: response.headers };
}

function rateLimit(headers: Headers): { limit: string | null; remaining: string | null; reset: string | null } {
  return {
    limit: headers.get('x-ratelimit-limit-requests'),
    remaining: headers.get('x-ratelimit-remaining-requests'),
    reset: headers.get('x-ratelimit-reset-requests'),
  };
}

for (const limiter of LIMITERS) {
  describe(`keyed requests refused before admission carry the x-ratelimit headers (${limiter.name})`, { skip: limiter.skip }, () => {
    let fake: OpenAIFake;
    let gateway: TestGateway;

    before(async () => {
      fake = await startOpenAIFake();
      gateway = await startTestGateway({ env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1`, ...limiter.env } });
    });
    after(async () => {
      await gateway?.close();
      await fake?.close();
    });

    test('400 bad body, 403 model not allowed, 404 unknown agent: the count of the last admission, nothing counted for them', async () => {
      const key = await gateway.createKey({ rpm: RPM, allowedModels: ['gpt-4o'] });
      await awayFromMinuteBoundary();
      const admitted = await post(gateway, key, '/v1/chat/completions', CHAT);
      assert.equal(admitted.status, 200);
      assert.equal(rateLimit(admitted.headers).remaining, String(RPM - 1));

      const refusals = [
        await post(gateway, key, '/v1/chat/completions', { model: 'gpt-4o' }),
        await post(gateway, key, '/v1/chat/completions', { ...CHAT, model: 'gpt-4o-mini' }),
        await post(gateway, key, '/v1/agents/no-such-agent/runs', { input: 'hi' }),
      ];
      assert.deepEqual(
        refusals.map(({ status, code }) => [status, code]),
        [
          [400, 'invalid_body'],
          [403, 'model_not_allowed'],
          [404, 'agent_not_found'],
        ],
      );
      for (const refusal of refusals) {
        const headers = rateLimit(refusal.headers);
        assert.equal(headers.limit, String(RPM), `${refusal.code}: ${JSON.stringify(headers)}`);
        assert.equal(headers.remaining, String(RPM - 1), `${refusal.code}: ${JSON.stringify(headers)}`);
        assert.match(headers.reset ?? '', /^\d+s$/);
      }
      // Refusals before admission are not counted: the next admission is the second of the minute.
      assert.equal(rateLimit((await post(gateway, key, '/v1/chat/completions', CHAT)).headers).remaining, String(RPM - 2));
    });

    test('a key without a per-minute limit gets no x-ratelimit headers on a refusal', async () => {
      const key = await gateway.createKey({ dailyTokens: 1_000_000 });
      const refused = await post(gateway, key, '/v1/chat/completions', { model: 'gpt-4o' });
      assert.equal(refused.status, 400);
      assert.deepEqual(rateLimit(refused.headers), { limit: null, remaining: null, reset: null });
    });
  });
}
