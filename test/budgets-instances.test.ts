import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { createPostgresDatabase, POSTGRES_URL } from './helpers/databases.js';
import { spyOnEstimates } from './helpers/estimates.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';

/**
 * Two gateways sharing PostgreSQL and Redis hold one budget together: 50 concurrent requests
 * split between them admit only what the budget's unreserved remainder covers, so what is
 * spent overshoots the budget by at most the one request admitted with a clamped reservation.
 */

const REDIS_URL = process.env.TEST_REDIS_URL;
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi there' }], max_tokens: 40 };
const REQUESTS = 50;

function sendCompletion(response: ServerResponse, prompt: number, completion: number): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: 'chatcmpl-shared',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    }),
  );
}

const skip = POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false;

describe('a budget across two instances sharing Redis and PostgreSQL', { skip }, () => {
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let fake: OpenAIFake;
  let gateways: [TestGateway, TestGateway];

  before(async () => {
    database = await createPostgresDatabase();
    fake = await startOpenAIFake();
    const env = {
      DATABASE_URL: database.url,
      MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      OPENAI_API_KEY: 'sk-upstream-budget-instances-000000',
      OPENAI_BASE_URL: `${fake.server.url}/v1`,
      REDIS_URL: REDIS_URL!,
      MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
    };
    // A generous command timeout: a loaded machine must not fall back to per-instance counters.
    const configFile = { limits: { redisCommandTimeoutMs: 10_000 } };
    gateways = [await startTestGateway({ env, configFile }), await startTestGateway({ env, configFile })];
  });
  after(async () => {
    for (const gateway of gateways ?? []) await gateway.close();
    await fake?.close();
    await database?.drop();
  });

  test(`${REQUESTS} concurrent requests on both instances: admitted while the budget has room, overshoot at most one clamped request`, async () => {
    const [first, second] = gateways;
    const estimates = spyOnEstimates(first);
    fake.server.on('POST /v1/chat/completions', (_request, response) => sendCompletion(response, 5, 5));
    const created = await first.admin('POST', '/admin/v1/keys', { name: 'shared', scopes: ['model:request'] });
    assert.equal(created.status, 201);
    const key = created.body.secret as string;
    const chat = async (gateway: TestGateway) => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(CHAT),
      });
      return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
    };
    assert.equal((await chat(first)).status, 200); // measures the estimate; spends 10 tokens before the budget exists
    const estimate = estimates[0]!.tokens;
    await first.gateway.context.logs.writer.flush(); // the spend a new budget starts from is the request log's

    const budgetTokens = 10 + 7 * estimate + Math.floor(estimate / 2);
    const budget = await first.admin('POST', '/admin/v1/budgets', { level: 'team', target: 'default', tokens: budgetTokens, period: 'month' });
    assert.equal(budget.status, 201);
    // The other instance reads the budget when the change is announced.
    while (second.gateway.context.budgets.book.all().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));

    // Every admitted request uses exactly its estimate; upstream answers once all were decided.
    const held: ServerResponse[] = [];
    let refused = 0;
    const releaseWhenAllDecided = () => {
      if (held.length + refused === REQUESTS) for (const response of held) sendCompletion(response, 5, estimate - 5);
    };
    fake.server.on('POST /v1/chat/completions', (_request, response) => {
      held.push(response);
      releaseWhenAllDecided();
    });
    const answers = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, index) => {
        const answer = await chat(index % 2 === 0 ? first : second);
        if (answer.status === 429) {
          assert.equal(answer.body.error?.code, 'budget_exceeded');
          assert.match(answer.body.error!.message, /team "default"/);
          refused += 1;
          releaseWhenAllDecided();
        }
        return answer.status;
      }),
    );
    // 10 spent (seeded from the request log), then 7 whole reservations and one clamped to half an estimate.
    const admitted = answers.filter((status) => status === 200).length;
    assert.equal(admitted, 8, answers.join(' '));
    assert.equal(answers.filter((status) => status === 429).length, REQUESTS - 8);

    const spent = async (gateway: TestGateway) => (await gateway.admin('GET', '/admin/v1/budgets')).body.data[0].spent.tokens as number;
    const total = 10 + admitted * estimate;
    assert.equal(await spent(first), total);
    assert.equal(await spent(second), total, 'both instances count the same');
    const overshoot = total - budgetTokens;
    const clamp = estimate - Math.floor(estimate / 2);
    assert.ok(overshoot <= clamp, `overshoot ${overshoot} is more than the one clamped request's ${clamp}`);
    assert.equal((await chat(second)).status, 429);
  });
});
