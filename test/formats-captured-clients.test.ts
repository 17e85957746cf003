import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { FAKE_ANTHROPIC_KEY, MID_CONVERSATION_SYSTEM_BETA, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The requests today's coding agents really send (Claude Code 2.1.197, Codex 0.171.0, opencode
 * 1.18.33), captured from the CLIs themselves (test/fixtures/clients/captured/), replayed against
 * the gateway over a model of each vendor. Each was refused before decisions §9's revision; each
 * must now be answered: passed through to the API's own vendor as sent, translated for the others
 * with what only tunes serving dropped and named.
 */

interface Exchange {
  method: string;
  path: string;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- captured bodies are read loosely; each test asserts what it reads
  body: any;
}

interface Capture {
  client: string;
  vendor: string;
  exchanges: Exchange[];
}

const DIRECTORY = new URL('./fixtures/clients/captured/', import.meta.url);
const CAPTURES = readdirSync(DIRECTORY)
  .filter((name) => name.endsWith('.json'))
  .map((name) => ({ name, ...(JSON.parse(readFileSync(new URL(name, DIRECTORY), 'utf8')) as Capture) }));

/** A model of each vendor, as the captures name them. */
const MODELS = ['gpt-5-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash'];

describe('captured coding-agent requests', () => {
  let anthropic: FakeAnthropic;
  let openai: OpenAIFake;
  let gemini: FakeGemini;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    [anthropic, openai, gemini] = await Promise.all([startFakeAnthropic(), startOpenAIFake(), startFakeGemini()]);
    gateway = await startTestGateway({
      env: {
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
        OPENAI_BASE_URL: `${openai.server.url}/v1`,
        OPENAI_API_KEY: 'sk-upstream-openai-test',
        GEMINI_BASE_URL: gemini.url,
        GEMINI_API_KEY: FAKE_GEMINI_KEY,
      },
    });
    key = await gateway.createKey({ scopes: ['model:request'] });
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
  });

  function replay(exchange: Exchange, model: string): Promise<Response> {
    return fetch(`${gateway.url}${exchange.path}`, {
      method: exchange.method,
      headers: { ...exchange.headers, 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ ...exchange.body, model }),
    });
  }

  for (const capture of CAPTURES) {
    for (const model of MODELS) {
      test(`${capture.name} (${capture.client}) over ${model}: answered in full`, async () => {
        for (const exchange of capture.exchanges) {
          const response = await replay(exchange, model);
          const text = await response.text();
          assert.equal(response.status, 200, text.slice(0, 500));
          if (exchange.body.stream === true) assert.match(text, /event: (message_stop|response\.completed)\n/, 'the stream ends as the API ends it');
        }
      });
    }
  }

  test("Claude Code's mid-conversation system message reaches Anthropic as sent, with its beta header", async () => {
    const [exchange] = CAPTURES.find((capture) => capture.name === 'claude-code-anthropic-3.json')!.exchanges;
    const response = await replay(exchange!, 'claude-opus-4-8');
    assert.equal(response.status, 200, await response.text());
    const received = anthropic.requests.at(-1)!;
    assert.deepEqual(received.json.messages, exchange!.body.messages);
    assert.ok(String(received.headers['anthropic-beta']).split(',').includes(MID_CONVERSATION_SYSTEM_BETA));
    assert.equal(response.headers.get('x-modelgate-dropped'), null, 'nothing is dropped for the API own vendor');
  });

  test("Claude Code over Gemini: adaptive thinking as thinkingConfig, system turns joined to the instruction, serving hints told", async () => {
    const [exchange] = CAPTURES.find((capture) => capture.name === 'claude-code-gemini-1.json')!.exchanges;
    const response = await replay(exchange!, 'gemini-2.5-flash');
    await response.text();
    const body = gemini.last('streamGenerateContent')!.json;
    assert.deepEqual(body.generationConfig.thinkingConfig, { thinkingBudget: 24_576, includeThoughts: true });
    assert.ok(body.contents.every((content: { role: string }) => content.role === 'user' || content.role === 'model'));
    const dropped = response.headers.get('x-modelgate-dropped')!.split(',');
    for (const field of ['context_management', 'anthropic-beta', 'system[2].cache_control']) assert.ok(dropped.includes(field), `${field} in ${dropped.join(',')}`);
    const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
    assert.deepEqual(record.detail.droppedFields, dropped);
  });

  test("opencode's top_k reaches Gemini as topK", async () => {
    const [, exchange] = CAPTURES.find((capture) => capture.name === 'opencode-gemini-2.json')!.exchanges;
    const response = await replay(exchange!, 'gemini-2.5-flash');
    assert.equal(response.status, 200, await response.text());
    assert.equal(gemini.last('streamGenerateContent')!.json.generationConfig.topK, exchange!.body.top_k);
  });

  test("Codex over Claude: its namespace tool flattened, web search as Anthropic's, the reasoning effort as thinking", async () => {
    const exchange = CAPTURES.find((capture) => capture.name === 'codex-openai-2.json')!.exchanges.at(-1)!;
    const response = await replay(exchange, 'claude-sonnet-4-5');
    assert.equal(response.status, 200, await response.text());
    const body = anthropic.requests.at(-1)!.json;
    const names = body.tools.map((tool: { name: string }) => tool.name);
    const namespace = exchange.body.tools.find((tool: { type: string }) => tool.type === 'namespace');
    assert.ok(names.includes(`${namespace.name}__${namespace.tools[0].name}`), names.join(', '));
    assert.ok(body.tools.some((tool: { type?: string }) => tool.type === 'web_search_20250305'));
    assert.equal(body.thinking?.type, 'enabled');
    const dropped = response.headers.get('x-modelgate-dropped')!.split(',');
    for (const field of ['client_metadata', 'include', 'prompt_cache_key']) assert.ok(dropped.includes(field), `${field} in ${dropped.join(',')}`);
  });
});
