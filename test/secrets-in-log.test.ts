import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';

// Fake values with real shapes, assembled at run time so the source holds no key-shaped string.
const JWT = ['eyJ', 'hbGciOiJIUzI1NiJ9', '.', 'eyJ', 'zdWIiOiJhbm4ifQ', '.', 'c2lnbmF0dXJlLXZhbHVl'].join('');
const FINE_GRAINED_PAT = ['github_', 'pat_', '11ABCDEFG0123456789_', 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZab'].join('');
const AWS_TEMPORARY_ID = ['AS', 'IA', 'Q7WX3ZR9K2MB5TLA'].join('');
const SLACK = ['xo', 'xb-', '1234567890-0987654321-', 'AbCdEfGhIjKlMnOpQrStUv'].join('');
const STRIPE = ['sk', '_live_', '51Habcdefghijklmnop0123'].join('');
const TOOL_PASSWORD = 'tool-pass-4471';
const URL_PASSWORD = 'url-pass-9931';

/** Every secret a request below sends; none may be in any record, list page or export. */
const SECRETS = [JWT, FINE_GRAINED_PAT, AWS_TEMPORARY_ID, SLACK, STRIPE, TOOL_PASSWORD, URL_PASSWORD, 'hunter2'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read many record shapes
type Json = any;

describe('no secret stored raw, end to end', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-test-credential-0123456789' } });
    key = await gateway.createKey();
  });
  after(async () => {
    await gateway.close();
    await fake.server.close();
  });

  async function post(headers: Record<string, string>, body: unknown): Promise<string> {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.headers.get('x-request-id')!;
  }

  async function recordOf(requestId: string): Promise<Json> {
    await gateway.gateway.context.logs.writer.flush();
    const found = await gateway.admin('GET', `/admin/v1/logs/${requestId}`);
    assert.equal(found.status, 200);
    return found.body;
  }

  async function exported(): Promise<Json[]> {
    await gateway.gateway.context.logs.writer.flush();
    const response = await fetch(`${gateway.url}/admin/v1/logs/export?format=jsonl`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    return (await response.text()).trim().split('\n').map((line) => JSON.parse(line) as Json);
  }

  test('secrets in messages, tool-call arguments, tool results, image URLs, the model and X-Platform-ID', async () => {
    const ids = [
      await post({ 'x-platform-id': JWT }, {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'user', content: `deploy with ${FINE_GRAINED_PAT}, ${AWS_TEMPORARY_ID}, ${SLACK} and ${STRIPE}; my password: hunter2` },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'login', arguments: JSON.stringify({ user: 'ann', password: TOOL_PASSWORD }) } }] },
          { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ ok: true, access_token: TOOL_PASSWORD }) },
          { role: 'user', content: 'thanks' },
        ],
      }),
      // Refused (an image URL with credentials), and logged all the same.
      await post({}, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `https://ann:${URL_PASSWORD}@images.example.com/a.png` } }] }] }),
      await post({}, { model: FINE_GRAINED_PAT, messages: [{ role: 'user', content: 'hi' }] }),
    ];
    const records = await Promise.all(ids.map(recordOf));
    const listed = await gateway.admin('GET', '/admin/v1/logs?limit=1000');
    const everything = JSON.stringify([records, listed.body, await exported()]);
    for (const secret of SECRETS) assert.ok(!everything.includes(secret), `${secret.slice(0, 10)}… was stored`);

    const [chat] = records;
    assert.equal(chat.platform, '[redacted]');
    assert.deepEqual(JSON.parse(chat.request_payload.messages[1].tool_calls[0].function.arguments), { user: 'ann', password: '[redacted]' });
    assert.match(chat.request_payload.messages[0].content, /my password: \[redacted\]$/);
    assert.equal(records[2].requested_model, '[redacted]');
  });

  test('VETTING: secrets in every free-text field it keeps (context.userId, prompts, answer keys, messages)', async () => {
    // An npm token one character longer than the documented 36, and a bare AWS secret in prose.
    const npm = ['np', 'm_', 'FAKEfake00'.repeat(4).slice(0, 37)].join('');
    const awsSecret = 'FAKEfake00/+'.repeat(4).slice(0, 40);
    const response = await fetch(`${gateway.url}/v1/vetting/full`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({
        mode: 'chat',
        config: { chatModel: { modelId: 'gpt-4o-mini' } },
        prompts: { chatSystemPrompt: `Tutor. The aws secret for the lab is ${awsSecret}.` },
        context: { userId: npm, sessionId: 'session-1', items: [{ question: { text: `Slack ${SLACK}?`, id: 'q1', subject: `aws ${awsSecret}` }, answerKey: { correctAnswer: `pat ${FINE_GRAINED_PAT}`, keyConcepts: [`npm ${npm}`] } }] },
        messages: [{ role: 'user', content: `my password: hunter2, token ${JWT}` }],
      }),
    });
    await response.arrayBuffer();
    assert.equal(response.status, 200);
    const record = JSON.stringify(await recordOf(response.headers.get('x-request-id')!));
    for (const secret of [npm, awsSecret, SLACK, FINE_GRAINED_PAT, JWT, 'hunter2']) assert.ok(!record.includes(secret), `the record holds ${secret.slice(0, 8)}…`);
  });

  test('an export shows a media reference exactly as the admin API does', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const { response } = await client.images.generate({ model: 'gpt-image-1', prompt: 'a red square', n: 1 }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const shown = (await recordOf(requestId)).response_payload;
    const line = (await exported()).find((entry) => entry.request_id === requestId);
    assert.match(JSON.stringify(shown), /\[omitted image\/png: \d+ bytes, sha256 [0-9a-f]{64}\]/);
    assert.deepEqual(line.response_payload, shown);
  });
});
