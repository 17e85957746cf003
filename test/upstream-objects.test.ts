import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, startFakeGemini, textResponse, type FakeGemini } from './fakes/gemini.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * Native pass-through never lets a key name objects held in the gateway's own vendor account
 * (OpenAI's conversations, prompts, items, vector stores, files and containers; Anthropic's
 * files and containers) unless its project is granted them; ids the gateway made for the key
 * keep working.
 */
describe('upstream objects stay the operator’s', () => {
  let openaiFake: OpenAIFake;
  let anthropicFake: FakeAnthropic;
  let geminiFake: FakeGemini;
  let gateway: TestGateway;
  let plainKey: string;
  let grantedKey: string;

  before(async () => {
    openaiFake = await startOpenAIFake();
    anthropicFake = await startFakeAnthropic();
    geminiFake = await startFakeGemini();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${openaiFake.server.url}/v1`, ANTHROPIC_BASE_URL: anthropicFake.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY, GEMINI_BASE_URL: geminiFake.url, GEMINI_API_KEY: FAKE_GEMINI_KEY },
      configFile: { projects: { docs: { upstreamObjects: { vectorStores: ['vs_team_docs'], files: ['*'], containers: ['container_team'], cachedContents: ['cachedContents/team-cache'] } } } },
    });
    plainKey = await gateway.createKey({ projectId: 'tenant-b' });
    grantedKey = await gateway.createKey({ projectId: 'docs' });
  });

  after(async () => {
    await gateway.close();
    await openaiFake.server.close();
    await anthropicFake.close();
    await geminiFake.close();
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const responsesCalls = () => openaiFake.server.requests.filter((request) => request.path.startsWith('/v1/responses')).length;
  const messagesCalls = () => anthropicFake.requests.length;

  async function refusedWith(run: () => Promise<unknown>): Promise<{ status: number; code: string; param: string | null; message: string }> {
    try {
      await run();
    } catch (error) {
      if (error instanceof OpenAI.APIError) return { status: error.status ?? 0, code: String(error.code), param: error.param ?? null, message: error.message };
      throw error;
    }
    assert.fail('the request was served');
  }

  const BODIES: [field: string, body: Record<string, unknown>][] = [
    ['conversation', { conversation: 'conv_operator_1' }],
    ['conversation.id', { conversation: { id: 'conv_operator_1' } }],
    ['prompt.id', { prompt: { id: 'pmpt_operator_1' } }],
    ['input[0].id', { input: [{ type: 'item_reference', id: 'msg_of_another_key' }] }],
    ['tools[0].vector_store_ids[0]', { input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['vs_operator_1'] }] }],
    ['tools[0].container', { input: 'hi', tools: [{ type: 'code_interpreter', container: 'cntr_operator_1' }] }],
    ['tools[0].container.file_ids[0]', { input: 'hi', tools: [{ type: 'code_interpreter', container: { type: 'auto', file_ids: ['file-operator1'] } }] }],
  ];

  test('Responses: each field that names a vendor-account object is refused with 403 naming it, before any provider call', async () => {
    const before = responsesCalls();
    for (const [field, body] of BODIES) {
      const refused = await refusedWith(() => client(plainKey).responses.create({ model: 'gpt-4o-mini', input: 'hi', ...body } as never));
      assert.deepEqual({ status: refused.status, code: refused.code, param: refused.param }, { status: 403, code: 'upstream_object_not_granted', param: field });
      assert.match(refused.message, /projects\.<id>\.upstreamObjects\./);
    }
    assert.equal(responsesCalls(), before, 'nothing reached the vendor');
  });

  test('the compaction and token-count pass-throughs are held to the same rule', async () => {
    const body = { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: 'msg_of_another_key' }] };
    for (const path of ['/v1/responses/input_tokens', '/v1/responses/compact']) {
      const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${plainKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(response.status, 403, path);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'upstream_object_not_granted');
    }
  });

  test('items of a response the gateway stored for this key keep working; granted ids reach the vendor unchanged', async () => {
    const first = await client(plainKey).responses.create({ model: 'gpt-4o-mini', input: 'hi' });
    const itemId = first.output[0]!.id!;
    const next = await client(plainKey).responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: [{ type: 'item_reference', id: itemId }] });
    assert.equal(next.status, 'completed');
    // Another key cannot name that item.
    const other = await gateway.createKey({ projectId: 'tenant-c' });
    assert.equal((await refusedWith(() => client(other).responses.create({ model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: itemId }] }))).status, 403);

    const granted = await client(grantedKey).responses.create({
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [{ type: 'file_search', vector_store_ids: ['vs_team_docs'] }],
    });
    assert.equal(granted.status, 'completed');
    const sent = openaiFake.server.requests.at(-1)!.json as { tools: { vector_store_ids: string[] }[] };
    assert.deepEqual(sent.tools[0]!.vector_store_ids, ['vs_team_docs']);
    // A grant is by id: another vector store of the account is still refused.
    const notListed = await refusedWith(() => client(grantedKey).responses.create({ model: 'gpt-4o-mini', input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['vs_operator_1'] }] }));
    assert.equal(notListed.param, 'tools[0].vector_store_ids[0]');
  });

  test('Messages: Anthropic file ids and containers are refused unless granted', async () => {
    const send = (key: string, body: Record<string, unknown>) =>
      fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...body }),
      });
    const withFile = { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_011operator' } }, { type: 'text', text: 'sum up' }] }] };
    const before = messagesCalls();
    for (const body of [withFile, { container: 'container_operator' }]) {
      const refused = await send(plainKey, body);
      assert.equal(refused.status, 403);
      const error = (await refused.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(error.error.type, 'permission_error');
      assert.match(error.error.message, /upstreamObjects/);
    }
    assert.equal(messagesCalls(), before);
    assert.equal((await send(grantedKey, withFile)).status, 200);
    assert.equal((await send(grantedKey, { container: 'container_team' })).status, 200);
  });

  test("Gemini API: a context cache of Google's account is refused unless granted", async () => {
    const send = (key: string) =>
      fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], cachedContent: 'cachedContents/team-cache' }),
      });
    const before = geminiFake.requests.length;
    const refused = await send(plainKey);
    assert.equal(refused.status, 403);
    const error = (await refused.json()) as { error: { code: number; status: string; message: string } };
    assert.equal(error.error.status, 'PERMISSION_DENIED');
    assert.match(error.error.message, /cachedContent/);
    assert.equal(geminiFake.requests.length, before, 'nothing reached Google');
    geminiFake.reply('chat', { response: textResponse('From the cache.') });
    assert.equal((await send(grantedKey)).status, 200);
    assert.equal(geminiFake.requests.at(-1)?.json?.cachedContent, 'cachedContents/team-cache');
  });
});
