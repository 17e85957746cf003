import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer as createTlsServer, type Server as HttpsServer } from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALERT_SIGNATURE_HEADER, alertSignature } from '../src/budgets/index.js';
import type { Resolver } from '../src/network/index.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { createPostgresDatabase, POSTGRES_URL } from './helpers/databases.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { TEST_ENCRYPTION_KEY } from './helpers/storage-backends.js';
import { opensslMissing, testCertificate } from './helpers/test-certificate.js';

/**
 * Budget alerts: two gateways sharing PostgreSQL and Redis send each threshold of a period
 * once, to a real local https receiver that checks every signature; a failed delivery is
 * retried, and the list shows each alert's state.
 */

const SECRET = `alert-${'FAKEfake00'.repeat(3)}`;
const REDIS_URL = process.env.TEST_REDIS_URL;
const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 };

function sendCompletion(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: 'chatcmpl-alerts',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 },
    }),
  );
}

function signedBy(header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=[0-9a-f]{64}$/.exec(header ?? '');
  if (match === null) return false;
  const expected = Buffer.from(alertSignature(SECRET, Number(match[1]), body));
  const given = Buffer.from(header!);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

const skip = opensslMissing || (POSTGRES_URL === undefined ? 'TEST_DATABASE_URL is not set' : REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false);

describe('budget alerts', { skip }, () => {
  let server: HttpsServer;
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let fake: OpenAIFake;
  let gateways: [TestGateway, TestGateway];
  const received: { path: string; body: string; signed: boolean; answered: number }[] = [];
  let failFirst = true;

  before(async () => {
    const certificate = testCertificate('hooks.test');
    server = createTlsServer(certificate, (request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const signed = signedBy(request.headers[ALERT_SIGNATURE_HEADER] as string | undefined, body);
        // The first delivery fails: it must be retried.
        const answered = !signed ? 401 : request.url === '/alerts' && failFirst ? 500 : 204;
        if (request.url === '/alerts' && signed) failFirst = false;
        received.push({ path: request.url ?? '', body, signed, answered });
        response.writeHead(answered).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    database = await createPostgresDatabase();
    fake = await startOpenAIFake();
    fake.server.on('POST /v1/chat/completions', (_request, response) => sendCompletion(response));
    const env = {
      DATABASE_URL: database.url,
      MODELGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      OPENAI_API_KEY: 'sk-upstream-budget-alerts-00000000',
      OPENAI_BASE_URL: `${fake.server.url}/v1`,
      REDIS_URL: REDIS_URL!,
      MODELGATE_REDIS_KEY_PREFIX: `mg-test-${randomBytes(6).toString('hex')}:`,
      ALERT_SECRET: SECRET,
    };
    const hook = (path: string, format: 'json' | 'slack') => ({ url: `https://hooks.test:${port}${path}`, secretEnv: 'ALERT_SECRET', format, allowAddresses: ['127.0.0.1/32'] });
    const configFile = {
      limits: { redisCommandTimeoutMs: 10_000 },
      budgets: { alerts: { webhooks: [hook('/alerts', 'json'), hook('/slack', 'slack')], retryBaseMs: 20, maxAttempts: 3 } },
    };
    const transport = { resolver: toLoopback, ca: certificate.cert };
    gateways = [await startTestGateway({ env, configFile, budgetAlertWebhooks: transport }), await startTestGateway({ env, configFile, budgetAlertWebhooks: transport })];
  });
  after(async () => {
    for (const gateway of gateways ?? []) await gateway.close();
    await fake?.close();
    await database?.drop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('each threshold is delivered once per period across both instances, signed; a failed delivery is retried and shown', async () => {
    const [first, second] = gateways;
    const created = await first.admin('POST', '/admin/v1/keys', { name: 'alerted', scopes: ['model:request'] });
    const key = created.body.secret as string;
    const budget = await first.admin('POST', '/admin/v1/budgets', { level: 'key', target: created.body.id, tokens: 100, period: 'day', thresholds: [50, 80, 100] });
    assert.equal(budget.status, 201);
    while (second.gateway.context.budgets.book.all().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));

    const statuses: number[] = [];
    for (let index = 0; index < 12; index += 1) {
      const response = await fetch(`${gateways[index % 2]!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(CHAT),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    assert.ok(statuses.includes(429), statuses.join(' '));

    // Delivered in the background: wait until the receiver has each threshold's successful delivery, then look.
    const delivered = () => received.filter((hit) => hit.answered === 204);
    while (delivered().filter((hit) => hit.path === '/alerts').length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    let alerts = (await second.admin('GET', '/admin/v1/budgets/alerts')).body.data;
    while (alerts.some((alert: { state: string }) => alert.state !== 'delivered')) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      alerts = (await second.admin('GET', '/admin/v1/budgets/alerts')).body.data;
    }

    assert.ok(received.every((hit) => hit.signed), 'every delivery is signed');
    const thresholds = (path: string) => delivered().filter((hit) => hit.path === path).map((hit) => (JSON.parse(hit.body) as { threshold?: number; text: string }));
    assert.deepEqual(thresholds('/alerts').map((body) => body.threshold).sort((a, b) => a! - b!), [50, 80, 100], 'once per threshold');
    assert.equal(thresholds('/slack').length, 3);
    for (const body of thresholds('/slack')) assert.deepEqual(Object.keys(body), ['text']);
    assert.match(thresholds('/slack')[0]!.text, /key "[^"]+" has used \d+% of its day budget of 100 tokens/);
    const json = JSON.parse(delivered().find((hit) => hit.path === '/alerts')!.body);
    assert.equal(json.type, 'budget.threshold');
    assert.equal(json.budget.id, budget.body.id);

    assert.equal(alerts.length, 3);
    assert.deepEqual(alerts.map((alert: { threshold: number }) => alert.threshold).sort((a: number, b: number) => a - b), [50, 80, 100]);
    const retried = alerts.filter((alert: { attempts: number }) => alert.attempts === 2);
    assert.equal(retried.length, 1, 'the failed delivery was retried once');
    assert.equal(received.filter((hit) => hit.answered === 500).length, 1);
  });
});
