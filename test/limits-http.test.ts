import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import type { RouteModule } from '../src/server/app.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake } from './fakes/openai.js';
import { spyOnEstimates } from './helpers/estimates.js';
import { awayFromMinuteBoundary } from './helpers/minute-window.js';

const UPSTREAM = { OPENAI_API_KEY: 'sk-upstream-limits-test-0000000000' };
const REDIS_URL = process.env.TEST_REDIS_URL;
/** Where the counters live: in the process, or in Redis (a prefix of the test's own; a generous command timeout, so a loaded machine does not fall back). */
const LIMITERS: [name: string, options: { env: Record<string, string>; configFile?: Record<string, unknown> }, skip: string | false][] = [
  ['in-process counters', { env: {} }, false],
  [
    'Redis counters',
    {
      env: REDIS_URL === undefined ? {} : { REDIS_URL, MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:` },
      configFile: { limits: { redisCommandTimeoutMs: 10_000 } },
    },
    REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false,
  ],
];
const CHAT = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 };

interface ErrorBody {
  error: { code: string; type: string; request_id: string };
}

async function chat(gateway: TestGateway, key: string, body: unknown = CHAT) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ErrorBody };
}

/** An OpenAI `chat.completion` body as the API reference documents it. */
function sendCompletion(response: ServerResponse, usage: { prompt: number; completion: number }): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: 'chatcmpl-held',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-2024-08-06',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
    }),
  );
}

describe('limits over HTTP', () => {
  test('429 with the documented error body, Retry-After and x-ratelimit headers; admitted responses carry the headers too', async () => {
    const fake = await startOpenAIFake();
    const gateway = await startTestGateway({ env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1` } });
    try {
      const key = await gateway.createKey({ rpm: 3 });
      await awayFromMinuteBoundary();
      const first = await chat(gateway, key);
      // A streamed reply is written by its route, not sent through Fastify's onSend hooks.
      const streamed = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...CHAT, stream: true }),
      });
      assert.match(await streamed.text(), /data: \[DONE\]/);
      const second = await chat(gateway, key);
      const third = await chat(gateway, key);
      assert.deepEqual([first.status, streamed.status, second.status, third.status], [200, 200, 200, 429]);
      assert.equal(first.headers.get('x-ratelimit-limit-requests'), '3');
      assert.equal(first.headers.get('x-ratelimit-remaining-requests'), '2');
      assert.equal(streamed.headers.get('x-ratelimit-limit-requests'), '3');
      assert.equal(streamed.headers.get('x-ratelimit-remaining-requests'), '1');
      assert.match(streamed.headers.get('x-request-id')!, /\S/);
      assert.equal(second.headers.get('x-ratelimit-remaining-requests'), '0');
      assert.match(first.headers.get('x-ratelimit-reset-requests')!, /^\d+s$/);
      assert.equal(third.body.error.code, 'rate_limit_exceeded');
      assert.equal(third.body.error.type, 'rate_limit_error');
      assert.equal(third.body.error.request_id, third.headers.get('x-request-id'));
      const retryAfter = Number(third.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60);
      assert.equal(third.headers.get('x-ratelimit-remaining-requests'), '0');
    } finally {
      await gateway.close();
      await fake.close();
    }
  });

  test('the per-minute limit holds on every keyed endpoint: the encryption utilities count too', async () => {
    const gateway = await startTestGateway();
    try {
      const key = await gateway.createKey({ scopes: ['utils:crypto'], rpm: 2 });
      const encrypt = () =>
        fetch(`${gateway.url}/v1/utils/encrypt`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'hello' }),
        });
      await awayFromMinuteBoundary();
      const first = await encrypt();
      const { encryptedText } = (await first.json()) as { encryptedText: string };
      const second = await fetch(`${gateway.url}/v1/utils/decrypt`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ encryptedText }),
      });
      await second.arrayBuffer();
      const third = await encrypt();
      assert.deepEqual([first.status, second.status, third.status], [200, 200, 429]);
      assert.equal(first.headers.get('x-ratelimit-remaining-requests'), '1');
      assert.equal(second.headers.get('x-ratelimit-remaining-requests'), '0');
      assert.equal(((await third.json()) as ErrorBody).error.code, 'rate_limit_exceeded');
      assert.ok(Number(third.headers.get('retry-after')) >= 1);
    } finally {
      await gateway.close();
    }
  });

  for (const [counters, options, skip] of LIMITERS) {
    test(`N concurrent requests against a nearly spent daily token cap (${counters}): only what the unreserved remainder covers reaches the provider`, { skip }, async () => {
      const fake = await startOpenAIFake();
      const gateway = await startTestGateway({ ...options, env: { ...UPSTREAM, ...options.env, OPENAI_BASE_URL: `${fake.server.url}/v1` } });
      try {
        const estimates = spyOnEstimates(gateway);
        // One request measures the estimate; its real usage (10 tokens) is what it leaves spent.
        const probeKey = await gateway.createKey();
        fake.server.on('POST /v1/chat/completions', (_request, response) => sendCompletion(response, { prompt: 6, completion: 4 }));
        await chat(gateway, probeKey);
        const estimate = estimates[0]!.tokens;
        const whole = 3;
        const key = await gateway.createKey({ dailyTokens: 10 + whole * estimate + estimate - 1 });
        await chat(gateway, key); // spends 10 tokens: the cap now leaves room for `whole` reservations and most of one more
        const fits = whole + 1;

        // Upstream answers only once every request was either admitted (reached it) or refused.
        const held: ServerResponse[] = [];
        let refused = 0;
        const releaseWhenAllDecided = () => {
          if (held.length + refused === 10) for (const response of held) sendCompletion(response, { prompt: 6, completion: 4 });
        };
        fake.server.on('POST /v1/chat/completions', (_request, response) => {
          held.push(response);
          releaseWhenAllDecided();
        });
        const statuses = await Promise.all(
          Array.from({ length: 10 }, async () => {
            const { status, body } = await chat(gateway, key);
            if (status === 429) {
              assert.equal(body.error.code, 'daily_token_cap_exceeded');
              refused += 1;
              releaseWhenAllDecided();
            }
            return status;
          }),
        );
        assert.equal(statuses.filter((status) => status === 200).length, fits);
        assert.equal(statuses.filter((status) => status === 429).length, 10 - fits);
      } finally {
        await gateway.close();
        await fake.close();
      }
    });
  }

  test('a request for n choices reserves a reply budget for each of them, with max_tokens or without', async () => {
    const fake = await startOpenAIFake();
    const gateway = await startTestGateway({ env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1` } });
    try {
      const estimates = spyOnEstimates(gateway);
      const key = await gateway.createKey({ dailyTokens: 1_000_000 });
      const { max_tokens: _budget, ...withoutBudget } = CHAT;
      // "n":1 and "n":3 are bodies of one length, so the prompt part of each pair is the same.
      for (const body of [{ ...CHAT, n: 1 }, { ...CHAT, n: 3 }, { ...withoutBudget, n: 1 }, { ...withoutBudget, n: 3 }]) {
        assert.equal((await chat(gateway, key, body)).status, 200);
      }
      const [one, three, oneDefault, threeDefault] = estimates.map((estimate) => estimate.tokens);
      assert.equal(three! - one!, 2 * CHAT.max_tokens);
      assert.equal(threeDefault! - oneDefault!, 2 * 1024, 'two more default reply budgets (docs/limits.md)');
    } finally {
      await gateway.close();
      await fake.close();
    }
  });

  test('daily caps survive a restart: the in-process limiter is seeded from the request log', async () => {
    const fake = await startOpenAIFake();
    const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-limits-restart-'));
    const env = { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1` };
    fake.server.on('POST /v1/chat/completions', (_request, response) => sendCompletion(response, { prompt: 6, completion: 4 }));
    try {
      const first = await startTestGateway({ env, dataDir });
      const estimates = spyOnEstimates(first);
      const probe = await first.createKey();
      await chat(first, probe);
      // A 30-token cap admits requests estimated far above it (no max_tokens) while some of it
      // is left: three that use 10 each, then nothing.
      assert.ok(estimates[0]!.tokens > 30);
      const key = await first.createKey({ dailyTokens: 30 });
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await chat(first, key)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      await first.close();

      const second = await startTestGateway({ env, dataDir });
      try {
        const afterRestart = await chat(second, key);
        assert.equal(afterRestart.status, 429);
        assert.equal(afterRestart.body.error.code, 'daily_token_cap_exceeded');
      } finally {
        await second.close();
      }
    } finally {
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('a cancelled stream settles its reservation with the usage reported after the client left', async () => {
    /** A streaming route like chat's: its pump reports usage only after the client went away. */
    const lateUsageStream: RouteModule = (app) => {
      app.post('/test/late-usage-stream', { config: { scope: 'model:request' }, schema: { hide: true } }, async (request, reply) => {
        const { call } = request;
        call.describe({ mode: 'chat', payload: {}, streaming: true });
        const checked = call.check({ mode: 'chat', model: 'gpt-4o', capability: 'chat' });
        const admission = await call.reserve(request.principal, { tokens: 100, costUsd: null });
        reply.headers(admission.headers);
        // The provider began answering; its usage comes with its last frame.
        await checked.invoke(async () => ({}));
        const output = new PassThrough();
        const clientGone = once(reply.raw, 'close');
        call.pending(
          (async () => {
            output.write('data: {"first":true}\n\n');
            await clientGone;
            await new Promise((resolve) => setTimeout(resolve, 20)); // the provider's last frame comes a little later
            call.used({ promptTokens: 3, completionTokens: 4, totalTokens: 7, cachedPromptTokens: null });
            output.destroy();
          })(),
        );
        return reply.header('content-type', 'text/event-stream').send(output);
      });
    };
    const gateway = await startTestGateway({ routes: [...ROUTE_MODULES, lateUsageStream] });
    try {
      const key = await gateway.createKey({ dailyTokens: 120, rpm: 10 });
      const openAndLeave = async () => {
        const controller = new AbortController();
        const response = await fetch(`${gateway.url}/test/late-usage-stream`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: '{}',
          signal: controller.signal,
        });
        if (response.status === 200) {
          await response.body!.getReader().read();
          controller.abort();
        }
        return response;
      };
      const first = await openAndLeave();
      assert.equal(first.status, 200);
      // The route sets no rate-limit headers itself; the log hook adds the admission's.
      assert.equal(first.headers.get('x-ratelimit-limit-requests'), '10');
      const requestId = first.headers.get('x-request-id')!;
      let row;
      while ((row = await gateway.gateway.context.logs.store.get(requestId, { projectId: null })) === undefined) {
        await gateway.gateway.context.logs.writer.flush();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(row.status, 499);
      assert.equal(row.total_tokens, 7);
      // Settled to 7 tokens, another 100-token reservation fits the 120 cap (it would not if 100 were kept).
      assert.equal((await openAndLeave()).status, 200);
    } finally {
      await gateway.close();
    }
  });

  test('Redis unreachable: the gateway starts and serves, limits hold per instance, the fallback shows in metrics', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const closedPort = (probe.address() as { port: number }).port;
    probe.close();
    await once(probe, 'close');

    const fake = await startOpenAIFake();
    const gateway = await startTestGateway({ env: { ...UPSTREAM, OPENAI_BASE_URL: `${fake.server.url}/v1`, REDIS_URL: `redis://127.0.0.1:${closedPort}` } });
    try {
      const key = await gateway.createKey({ rpm: 2 });
      await awayFromMinuteBoundary();
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await chat(gateway, key)).status);
      assert.deepEqual(statuses, [200, 200, 429]);
      const metrics = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).text();
      assert.match(metrics, /^modelgate_limiter_redis_fallback 1$/m);
      assert.match(metrics, /^modelgate_limiter_fallback_admissions 2$/m);
    } finally {
      await gateway.close();
      await fake.close();
    }
  });
});
