import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { connectMcpClient, startTestMcpServer, type TestMcpServer } from './helpers/mcp-servers.js';
import { RecordTap } from './helpers/records.js';
import { ROUTE_MODULES } from '../src/server/routes/index.js';

const USAGE = { promptTokens: 5, completionTokens: 4 };
const FAKE_KEY = `sk-proj-${'FAKEfake00'.repeat(4)}`;

/** Guardrails attached by project: they hold for every tool call of its keys, at /mcp and in a model call's tool loop. */
const GUARDRAILS = [
  { name: 'tool-secrets', check: 'secrets', stage: ['input'], action: 'block', apply: { projects: ['tools'] } },
  { name: 'tool-pii', check: 'pii', stage: ['input', 'output'], action: 'mask', apply: { projects: ['tools'] }, options: { kinds: ['email'] } },
  { name: 'tool-words', check: 'keywords', stage: ['output'], action: 'block', apply: { projects: ['tools'] }, options: { words: ['Nightingale'] } },
];

describe('guardrails on MCP tool calls', () => {
  let fake: OpenAIFake;
  let files: TestMcpServer;
  let gateway: TestGateway;
  const tap = new RecordTap();
  let key = '';
  let plainKey = '';

  before(async () => {
    fake = await startOpenAIFake();
    files = await startTestMcpServer({ tools: ['echo'] });
    gateway = await startTestGateway({
      env: { OPENAI_API_KEY: 'sk-upstream-guardrails-00000000000', OPENAI_BASE_URL: `${fake.server.url}/v1` },
      configFile: { guardrails: GUARDRAILS, mcp: { allowAddresses: ['127.0.0.1/32'], servers: [{ name: 'files', url: files.url, timeoutMs: 5000 }] } },
      routes: [...ROUTE_MODULES, tap.routes],
    });
    key = await gateway.createKey({ projectId: 'tools', scopes: ['model:request', 'mcp:use'] });
    plainKey = await gateway.createKey({ projectId: 'plain', scopes: ['model:request', 'mcp:use'] });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
    await files?.stop();
  });

  test('at /mcp: arguments with a secret are refused before the tool is called', async () => {
    const client = await connectMcpClient(gateway.url, key);
    const before = files.calls.length;
    await assert.rejects(client.callTool({ name: 'files__echo', arguments: { text: `use ${FAKE_KEY}` } }), (error: unknown) => {
      assert.match(String((error as Error).message), /The guardrail "tool-secrets" blocked the arguments of this tool call/);
      assert.ok(!String((error as Error).message).includes(FAKE_KEY));
      return true;
    });
    assert.equal(files.calls.length, before, 'the tool never saw the secret');
    await client.close();
  });

  test('at /mcp: an email is masked in the arguments the tool gets and in the result the caller gets; a result with a blocked word is refused', async () => {
    const client = await connectMcpClient(gateway.url, key);
    const result = await client.callTool({ name: 'files__echo', arguments: { text: 'write to ada@example.org', nested: ['bob@example.org'] } });
    assert.deepEqual(files.calls.at(-1)!.arguments, { text: 'write to [email]', nested: ['[email]'] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'write to [email]' }]);
    await assert.rejects(client.callTool({ name: 'files__echo', arguments: { text: 'Project Nightingale' } }), /The guardrail "tool-words" blocked the tool's result/);
    await client.close();
    // Another project's key has none of them.
    const plain = await connectMcpClient(gateway.url, plainKey);
    const untouched = await plain.callTool({ name: 'files__echo', arguments: { text: 'write to ada@example.org' } });
    assert.deepEqual(untouched.content, [{ type: 'text', text: 'write to ada@example.org' }]);
    await plain.close();
  });

  test('in a Responses mcp tool loop: the tool gets masked arguments; the verdicts are in the request\'s record', async () => {
    fake.scriptChat({
      kind: 'per-request',
      script: (request) =>
        (request.json.messages as { role: string }[]).some((message) => message.role === 'tool')
          ? { kind: 'reply', text: 'Sent.', usage: USAGE }
          : { kind: 'tool-call', id: 'call_1', name: 'files__echo', arguments: JSON.stringify({ text: 'mail ada@example.org' }), usage: USAGE },
    });
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.responses.create({ model: 'gpt-4o-mini', input: 'send it', tools: [{ type: 'mcp', server_label: 'files', require_approval: 'never' }] }).withResponse();
    assert.equal(data.output_text, 'Sent.');
    assert.deepEqual(files.calls.at(-1)!.arguments, { text: 'mail [email]' });
    const toolResult = fake.server.requests.at(-1)!.json.messages.find((message: { role: string }) => message.role === 'tool');
    assert.ok(!JSON.stringify(toolResult).includes('ada@example.org'), 'the model never saw the email either');
    const record = await tap.wait(response.headers.get('x-request-id')!);
    const verdicts = (record.extra as { guardrails: { guardrail: string; stage: string; outcome: string }[] }).guardrails;
    assert.ok(verdicts.some(({ guardrail, stage, outcome }) => guardrail === 'tool-pii' && stage === 'input' && outcome === 'masked'), JSON.stringify(verdicts));
  });
});
