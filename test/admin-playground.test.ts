import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { REJECTED_THEN_ACCEPTED } from './helpers/vetting-provider.js';

/**
 * The playground relay of the admin API: a model endpoint called as a chosen key by an
 * administrator's session. Authorisation (session, CSRF, role), the key's own rules (paused,
 * allow-list, caps) as a direct call gets them, the request log naming the key, and a stream
 * that arrives as server-sent events.
 */

const ADMIN = { email: 'admin@example.com', password: 'admin password 0123' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer password 0123' };

let fake: OpenAIFake;
let gateway: TestGateway;
let admin: { cookie: string; csrf: string };
let viewer: { cookie: string; csrf: string };

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test asserts what it reads
  body: any;
}

async function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json') === true;
  return { status: response.status, headers: response.headers, text, body: json ? JSON.parse(text) : null };
}

async function signIn(account: { email: string; password: string }): Promise<{ cookie: string; csrf: string }> {
  const answer = await send('POST', '/admin/v1/session', {}, account);
  assert.equal(answer.status, 200, answer.text);
  return { cookie: (answer.headers.get('set-cookie') ?? '').split(';')[0]!, csrf: answer.body.csrf_token as string };
}

/** A key made through the admin API: its id and secret. */
async function newKey(fields: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const made = await gateway.admin('POST', '/admin/v1/keys', { name: 'playground', scopes: ['model:request'], ...fields });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return { id: made.body.id, secret: made.body.secret };
}

const asSession = (session: { cookie: string; csrf: string }) => ({ cookie: session.cookie, 'x-csrf-token': session.csrf });
const chatPath = (keyId: string) => `/admin/v1/playground/keys/${keyId}/v1/chat/completions`;
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from the playground' }] };

before(async () => {
  fake = await startOpenAIFake();
  gateway = await startTestGateway({
    env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-test-credential-0123456789' },
    configFile: { vetting: { verificationModel: 'gpt-4o-mini' } },
  });
  const { accounts } = gateway.gateway.context;
  await accounts.createUser(ADMIN.email, ADMIN.password, 'admin');
  await accounts.createUser(VIEWER.email, VIEWER.password, 'viewer');
  admin = await signIn(ADMIN);
  viewer = await signIn(VIEWER);
});
after(async () => {
  await gateway?.close();
  await fake?.close();
});

describe('POST /admin/v1/playground/keys/{keyId}/v1/…', () => {
  test('needs a session (or the admin token), its CSRF token and the admin role', async () => {
    const { id } = await newKey();
    const none = await send('POST', chatPath(id), {}, CHAT);
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'missing_api_key');
    const noCsrf = await send('POST', chatPath(id), { cookie: admin.cookie }, CHAT);
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.body.error.code, 'csrf_token_invalid');
    const wrongCsrf = await send('POST', chatPath(id), { cookie: admin.cookie, 'x-csrf-token': viewer.csrf }, CHAT);
    assert.equal(wrongCsrf.body.error.code, 'csrf_token_invalid');
    const byViewer = await send('POST', chatPath(id), asSession(viewer), CHAT);
    assert.equal(byViewer.status, 403);
    assert.equal(byViewer.body.error.code, 'insufficient_role');
    // A model key is not an admin credential, even the key the path names.
    const { secret } = await newKey();
    const byKey = await send('POST', chatPath(id), { authorization: `Bearer ${secret}` }, CHAT);
    assert.equal(byKey.status, 401);
    assert.equal(byKey.body.error.code, 'invalid_api_key');
    // The session is checked before the key: a stranger learns nothing about keys.
    const unknownKey = await send('POST', chatPath('key_doesnotexist'), {}, CHAT);
    assert.equal(unknownKey.body.error.code, 'missing_api_key');
    assert.equal(fake.chatRequests().length, 0, 'no refused call reached the provider');
  });

  test('answers as /v1 does, and the request log records the call under the chosen key', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Hello from the fake.', usage: { promptTokens: 5, completionTokens: 4 } });
    const { id } = await newKey();
    const answer = await send('POST', chatPath(id), asSession(admin), CHAT);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.object, 'chat.completion');
    assert.equal(answer.body.choices[0].message.content, 'Hello from the fake.');
    const record = await loggedRecord(gateway, answer.headers.get('x-request-id')!);
    assert.equal(record.key_id, id);
    assert.equal(record.endpoint, '/v1/chat/completions');
    assert.equal(record.platform, 'dashboard-playground');
    assert.equal(record.status, 200);
    assert.equal(record.usage.total_tokens, 9);
  });

  test('streams server-sent events to the browser, ending with [DONE]', async () => {
    fake.scriptChat({ kind: 'stream', deltas: ['Hel', 'lo', ' there.'], usage: { promptTokens: 5, completionTokens: 3 } });
    const { id } = await newKey();
    const answer = await send('POST', chatPath(id), asSession(admin), { ...CHAT, stream: true, stream_options: { include_usage: true } });
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/event-stream/);
    const frames = answer.text.split('\n\n').filter((frame) => frame.startsWith('data: '));
    assert.equal(frames.at(-1), 'data: [DONE]');
    const text = frames
      .slice(0, -1)
      .map((frame) => JSON.parse(frame.slice(6)) as { choices: { delta: { content?: string } }[] })
      .map((chunk) => chunk.choices[0]?.delta.content ?? '')
      .join('');
    assert.equal(text, 'Hello there.');
    const record = await loggedRecord(gateway, answer.headers.get('x-request-id')!);
    assert.equal(record.key_id, id);
    assert.equal(record.streaming, true);
  });

  test('a paused key is refused with key_paused, as its secret would be; the refusal is logged under the key', async () => {
    const { id, secret } = await newKey();
    assert.equal((await gateway.admin('POST', `/admin/v1/keys/${id}/pause`)).status, 200);
    const relayed = await send('POST', chatPath(id), asSession(admin), CHAT);
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: secret, maxRetries: 0 });
    const direct = await client.chat.completions.create(CHAT as never).then(
      () => assert.fail('a paused key was let in'),
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );
    assert.equal(relayed.status, direct.status);
    assert.equal(relayed.body.error.code, 'key_paused');
    assert.equal(relayed.body.error.message, (direct.error as { message: string }).message);
    const record = await loggedRecord(gateway, relayed.headers.get('x-request-id')!);
    assert.equal(record.key_id, id);
    assert.equal(record.error_code, 'key_paused');
  });

  test('a key whose allow-list leaves the model out is refused with model_not_allowed; nothing reaches the provider', async () => {
    const { id } = await newKey({ allowed_models: ['gpt-4o'] });
    const before = fake.chatRequests().length;
    const answer = await send('POST', chatPath(id), asSession(admin), CHAT);
    assert.equal(answer.status, 403);
    assert.equal(answer.body.error.code, 'model_not_allowed');
    assert.equal(answer.body.error.param, 'model');
    assert.equal(fake.chatRequests().length, before);
    const record = await loggedRecord(gateway, answer.headers.get('x-request-id')!);
    assert.equal(record.key_id, id);
  });

  test("the key's caps hold: a key at its requests-per-minute limit is refused with 429", async () => {
    fake.scriptChat({ kind: 'reply', text: 'Hi.', usage: { promptTokens: 1, completionTokens: 1 } });
    const { id } = await newKey({ limits: { rpm: 1 } });
    assert.equal((await send('POST', chatPath(id), asSession(admin), CHAT)).status, 200);
    const second = await send('POST', chatPath(id), asSession(admin), CHAT);
    assert.equal(second.status, 429);
    assert.equal(second.body.error.code, 'rate_limit_exceeded');
  });

  test('an unknown key id is a 404 naming where the ids are listed', async () => {
    const answer = await send('POST', chatPath('key_doesnotexist'), asSession(admin), CHAT);
    assert.equal(answer.status, 404);
    assert.equal(answer.body.error.code, 'not_found');
    assert.match(answer.body.error.message, /GET \/admin\/v1\/keys/);
  });

  test('embeddings and image generation relay too; the relayed routes stay out of the public OpenAPI document', async () => {
    const { id } = await newKey();
    const embedded = await send('POST', `/admin/v1/playground/keys/${id}/v1/embeddings`, asSession(admin), { model: 'text-embedding-3-small', input: 'hello' });
    assert.equal(embedded.status, 200, embedded.text);
    assert.equal(embedded.body.data.length, 1);
    const image = await send('POST', `/admin/v1/playground/keys/${id}/v1/images/generations`, asSession(admin), {
      model: 'gpt-image-1',
      prompt: 'a pixel',
    });
    assert.equal(image.status, 200, image.text);
    assert.ok(typeof image.body.data[0].b64_json === 'string');
    const openapi = await send('GET', '/openapi.json', {});
    assert.ok(!Object.keys(openapi.body.paths).some((path) => path.includes('playground')));
    assert.ok(openapi.body.paths['/v1/chat/completions'] !== undefined);
  });

  test('the Responses and Messages APIs relay too, each answering in its own shape under the chosen key', async () => {
    fake.scriptChat({ kind: 'reply', text: 'Hello from the fake.', usage: { promptTokens: 5, completionTokens: 4 } });
    const { id, secret: own } = await newKey();
    const messaged = await send('POST', `/admin/v1/playground/keys/${id}/v1/messages`, asSession(admin), { model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(messaged.status, 200, messaged.text);
    assert.equal(messaged.body.type, 'message');
    assert.deepEqual(messaged.body.content, [{ type: 'text', text: 'Hello from the fake.' }]);
    assert.equal((await loggedRecord(gateway, messaged.headers.get('x-request-id')!)).key_id, id);
    // A Messages error keeps Anthropic's shape on the relay as well.
    const refused = await send('POST', `/admin/v1/playground/keys/${id}/v1/messages`, asSession(admin), { model: 'gpt-4o-mini', messages: [] });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.type, 'error');

    const responded = await send('POST', `/admin/v1/playground/keys/${id}/v1/responses`, asSession(admin), { model: 'gpt-4o-mini', input: 'Hi' });
    assert.equal(responded.status, 200, responded.text);
    assert.equal(responded.body.object, 'response');
    assert.equal((await loggedRecord(gateway, responded.headers.get('x-request-id')!)).key_id, id);
    // Stored for the key the playground acted as: that key reads it back at /v1, another does not.
    const stored = (key: string) => fetch(`${gateway.url}/v1/responses/${responded.body.id}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await stored(own)).status, 200);
    const relayed = await send('GET', `/admin/v1/playground/keys/${id}/v1/responses/${responded.body.id}`, asSession(admin));
    assert.equal(relayed.body.id, responded.body.id);
    assert.equal((await stored((await newKey()).secret)).status, 404);
  });

  test("the Gemini API relays too, in Google's shape, logged under its own endpoint and the chosen key", async () => {
    fake.scriptChat({ kind: 'reply', text: 'Hello from the fake.', usage: { promptTokens: 5, completionTokens: 4 } });
    const { id } = await newKey();
    const generated = await send('POST', `/admin/v1/playground/keys/${id}/v1beta/models/gpt-4o-mini:generateContent`, asSession(admin), { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
    assert.equal(generated.status, 200, generated.text);
    assert.equal(generated.body.candidates[0].content.parts[0].text, 'Hello from the fake.');
    const record = await loggedRecord(gateway, generated.headers.get('x-request-id')!);
    assert.equal(record.key_id, id);
    assert.equal(record.endpoint, '/v1beta/models/{model}:generateContent');
    assert.equal(record.platform, 'dashboard-playground');
    // Streamed as the dashboard asks for it (its requests accept JSON): server-sent events.
    const streamed = await send('POST', `/admin/v1/playground/keys/${id}/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse`, { ...asSession(admin), accept: 'application/json' }, { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
    assert.equal(streamed.status, 200, streamed.text);
    assert.match(streamed.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.match(streamed.text, /^data: \{"candidates"/m);
    assert.equal((await loggedRecord(gateway, streamed.headers.get('x-request-id')!)).endpoint, '/v1beta/models/{model}:streamGenerateContent');
    // An error keeps Google's shape on the relay as well.
    const refused = await send('POST', `/admin/v1/playground/keys/${id}/v1beta/models/gpt-4o-mini:generateContent`, asSession(admin), { contents: [] });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.status, 'INVALID_ARGUMENT');
  });

    test('lightweight VETTING shows every attempt (draft, verdict) in the playground only; a direct call does not', async () => {
    const script = () => fake.scriptChat(REJECTED_THEN_ACCEPTED.script());
    const { rejected, accepted } = REJECTED_THEN_ACCEPTED;
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is 6 times 7?' }] };
    const { id, secret } = await newKey();
    script();
    const relayed = await send('POST', `/admin/v1/playground/keys/${id}/v1/chat/vetting`, asSession(admin), body);
    assert.equal(relayed.status, 200, relayed.text);
    assert.equal(relayed.body.choices[0].message.content, accepted.draft);
    const attempts = relayed.body.vetting_info.attempts as { chatResponse: string; verificationPassed: boolean; verificationOutput: string }[];
    assert.deepEqual(
      attempts.map((attempt) => [attempt.chatResponse, attempt.verificationPassed, JSON.parse(attempt.verificationOutput).reason]),
      [
        [rejected.draft, false, rejected.reason],
        [accepted.draft, true, accepted.reason],
      ],
    );
    script();
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: secret, maxRetries: 0 });
    const direct = (await client.post('/chat/vetting', { body })) as { vetting_info: Record<string, unknown> };
    assert.deepEqual(direct.vetting_info, { attemptCount: 2, stopReason: 'VERIFICATION_PASSED', lastFailureReason: rejected.reason });
  });
});
