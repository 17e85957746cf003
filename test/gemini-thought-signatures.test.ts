import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_AWS, startFakeBedrock, type BedrockFake } from './fakes/bedrock.js';
import { candidateResponse, FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { startFakeVertex, vertexEnv, type VertexFake } from './fakes/vertex.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * Gemini 3 refuses a turn whose function call lost its thought signature. Through the Messages
 * and Responses APIs the signature travels as the reasoning's (a thinking block, a reasoning
 * item's encrypted content), which their clients send back as they received it; these tests
 * take the answer through each official SDK, send the conversation back and read what Gemini got.
 */

const MODEL = 'gemini-3-pro-preview';
const SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS1maXJzdC1jYWxs';
const CALL_PARTS = [
  { functionCall: { name: 'read_file', args: { path: 'a.ts' } }, thoughtSignature: SIGNATURE },
  { functionCall: { name: 'read_file', args: { path: 'b.ts' } } },
];
const TOOL = { name: 'read_file', description: 'Reads a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] } };

/** The turn after `message`, to `model`: the conversation with the answer and an output for each of its calls. */
function nextTurn(model: string, ask: Anthropic.MessageParam, message: Anthropic.Message): Anthropic.MessageCreateParamsNonStreaming {
  const uses = message.content.filter((block) => block.type === 'tool_use');
  return {
    model,
    max_tokens: 512,
    tools: [TOOL],
    messages: [
      ask,
      { role: 'assistant', content: message.content },
      { role: 'user', content: uses.map((use) => ({ type: 'tool_result' as const, tool_use_id: use.id, content: 'export {}' })) },
    ],
  };
}

describe('Gemini thought signatures through the Messages and Responses APIs', () => {
  let fake: FakeGemini;
  let claude: FakeAnthropic;
  let bedrock: BedrockFake;
  let vertex: VertexFake;
  let gateway: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;

  before(async () => {
    fake = await startFakeGemini();
    claude = await startFakeAnthropic();
    bedrock = await startFakeBedrock();
    vertex = await startFakeVertex('anthropic');
    gateway = await startTestGateway({
      env: {
        GEMINI_BASE_URL: fake.url,
        GEMINI_API_KEY: FAKE_GEMINI_KEY,
        ANTHROPIC_BASE_URL: claude.url,
        ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY,
        AWS_REGION: FAKE_AWS.region,
        AWS_ACCESS_KEY_ID: FAKE_AWS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: FAKE_AWS.secretAccessKey,
        BEDROCK_BASE_URL: bedrock.server.url,
        ...vertexEnv(vertex),
      },
    });
    const key = await gateway.createKey({ scopes: ['model:request'] });
    anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
    await claude?.close();
    await bedrock?.close();
    await vertex?.close();
  });

  /** The last generate request Gemini got, streamed or not. */
  const fakeLast = () => {
    const requests = fake.requests.filter((request) => request.path.includes(':generateContent') || request.path.includes(':streamGenerateContent'));
    return requests.at(-1)!.json as { contents: { role: string; parts: Record<string, unknown>[] }[] };
  };

  for (const stream of [false, true]) {
    test(`Messages${stream ? ', streamed' : ''}: the signature comes back on the first call`, async () => {
      fake.reply('generateContent', { response: candidateResponse(CALL_PARTS, { model: MODEL }) });
      const ask: Anthropic.MessageParam = { role: 'user', content: 'Read a.ts and b.ts' };
      const message = stream
        ? await anthropic.messages.stream({ model: MODEL, max_tokens: 512, tools: [TOOL], messages: [ask] }).finalMessage()
        : await anthropic.messages.create({ model: MODEL, max_tokens: 512, tools: [TOOL], messages: [ask] });
      const thinking = message.content.find((block) => block.type === 'thinking');
      assert.ok(thinking?.type === 'thinking' && thinking.signature.endsWith(`:${SIGNATURE}`), 'a thinking block carries the turn signature');
      const uses = message.content.filter((block) => block.type === 'tool_use');
      assert.equal(uses.length, 2);

      fake.reply('generateContent', { response: candidateResponse([{ text: 'Both read.' }], { model: MODEL }) });
      await anthropic.messages.create(nextTurn(MODEL, ask, message));
      assert.deepEqual(fakeLast().contents.find((content) => content.role === 'model')!.parts, CALL_PARTS);
    });

    test(`Responses${stream ? ', streamed' : ''}: the signature comes back on the first call`, async () => {
      fake.reply('generateContent', { response: candidateResponse(CALL_PARTS, { model: MODEL }) });
      const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'read_file', description: 'Reads a file', strict: false, parameters: TOOL.input_schema }];
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Read a.ts and b.ts' }];
      const response = stream
        ? await openai.responses.stream({ model: MODEL, tools, input, store: false, include: ['reasoning.encrypted_content'] }).finalResponse()
        : await openai.responses.create({ model: MODEL, tools, input, store: false, include: ['reasoning.encrypted_content'] });
      const reasoning = response.output.find((item) => item.type === 'reasoning');
      assert.ok(reasoning?.type === 'reasoning' && typeof reasoning.encrypted_content === 'string', 'a reasoning item carries the turn signature');
      const calls = response.output.filter((item) => item.type === 'function_call');
      assert.equal(calls.length, 2);

      fake.reply('generateContent', { response: candidateResponse([{ text: 'Both read.' }], { model: MODEL }) });
      // As Codex sends the next turn: every output item back, then the calls' outputs.
      await openai.responses.create({
        model: MODEL,
        tools,
        store: false,
        input: [
          ...input,
          ...(response.output as OpenAI.Responses.ResponseInputItem[]),
          ...calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.type === 'function_call' ? call.call_id : '', output: 'export {}' })),
        ],
      });
      assert.deepEqual(fakeLast().contents.find((content) => content.role === 'model')!.parts, CALL_PARTS);
    });
  }

  test('a signature from another vendor is not sent to Gemini', async () => {
    fake.reply('generateContent', { response: candidateResponse([{ text: 'Done.' }], { model: MODEL }) });
    await anthropic.messages.create({
      model: MODEL,
      max_tokens: 512,
      tools: [TOOL],
      messages: [
        { role: 'user', content: 'Read a.ts' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Reading it.', signature: 'anthropic:RXF1YWxseSBvcGFxdWU=' },
            { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'export {}' }] },
      ],
    });
    assert.deepEqual(fakeLast().contents.find((content) => content.role === 'model')!.parts, [{ functionCall: { name: 'read_file', args: { path: 'a.ts' } } }]);
  });

  // As after /model in Claude Code: the same conversation, now to a Claude model, passed through
  // to Anthropic's own API or to a cloud that serves Claude.
  const claudes = [
    { name: 'Anthropic', model: 'claude-sonnet-4-5', sent: () => claude.requests.filter((request) => request.path === '/v1/messages').at(-1)!.json },
    { name: 'Bedrock', model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', sent: () => bedrock.server.requests.at(-1)!.json },
    { name: 'Vertex AI', model: 'vertex/claude-sonnet-4-5@20250929', sent: () => vertex.server.requests.filter((request) => request.path.startsWith('/v1/projects/')).at(-1)!.json },
  ];
  for (const target of claudes) {
    for (const stream of [false, true]) {
      test(`a Gemini turn sent on to Claude on ${target.name}${stream ? ', streamed' : ''}: its signed thinking is left out, Claude gets the calls`, async () => {
        fake.reply('generateContent', { response: candidateResponse(CALL_PARTS, { model: MODEL }) });
        const ask: Anthropic.MessageParam = { role: 'user', content: 'Read a.ts and b.ts' };
        const message = await anthropic.messages.create({ model: MODEL, max_tokens: 512, tools: [TOOL], messages: [ask] });
        const next = nextTurn(target.model, ask, message);
        if (stream) await anthropic.messages.stream(next).finalMessage();
        else await anthropic.messages.create(next);
        const sent = target.sent() as { messages: { role: string; content: { type: string }[] }[] };
        assert.deepEqual(sent.messages[1]!.content.map((block) => block.type), ['tool_use', 'tool_use']);
      });
    }
  }
});
