import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic.js';
import { FAKE_GEMINI_KEY, startFakeGemini, type FakeGemini } from './fakes/gemini.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * What a translation sends a vendor is checked as the gateway checks what it passes on: tool-call
 * arguments nested deeper than a request body may be, or that are not a JSON object, and media
 * that is not base64, are the caller's 400 naming the field — for every vendor alike, and before
 * anything reaches one (they used to reach Claude and be answered 200).
 */

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

function deepArguments(levels: number): string {
  return `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

describe('translated input is validated as the native path validates it', () => {
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    [anthropic, gemini] = await Promise.all([startFakeAnthropic(), startFakeGemini()]);
    gateway = await startTestGateway({ env: { ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY, GEMINI_BASE_URL: gemini.url, GEMINI_API_KEY: FAKE_GEMINI_KEY } });
    client = new OpenAI({ apiKey: await gateway.createKey({ scopes: ['model:request'] }), baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([anthropic?.close(), gemini?.close()]);
  });

  const sent = () => anthropic.requests.length + gemini.requests.length;

  async function refused(request: OpenAI.ChatCompletionCreateParamsNonStreaming, param: string, code: string): Promise<void> {
    const before = sent();
    await assert.rejects(client.chat.completions.create(request), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError, String(error));
      assert.equal((error.error as { param?: string }).param, param);
      assert.equal(error.code, code);
      return true;
    });
    assert.equal(sent(), before, 'nothing reached the vendor');
  }

  for (const model of ['claude-sonnet-4-5', 'gemini-2.5-flash']) {
    test(`${model}: tool arguments nested deeper than a body may be are a 400`, async () => {
      for (const levels of [200, 100_000]) {
        await refused(
          {
            model,
            messages: [
              { role: 'user', content: 'Go.' },
              { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: deepArguments(levels) } }] },
              { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
            ],
          },
          'messages[1].tool_calls[0].function.arguments',
          'invalid_body',
        );
      }
    });

    test(`${model}: tool arguments that are not a JSON object are a 400`, async () => {
      await refused(
        {
          model,
          messages: [
            { role: 'user', content: 'Go.' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '[1, 2]' } }] },
            { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
          ],
        },
        'messages[1].tool_calls[0].function.arguments',
        'invalid_body',
      );
    });

    test(`${model}: an image whose data is not base64 is a 400; a good one is sent`, async () => {
      const image = (data: string): OpenAI.ChatCompletionCreateParamsNonStreaming => ({
        model,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is it?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] }],
      });
      await refused(image('not base64 at all!'), 'messages[0].content[1].image_url.url', 'invalid_image_url');
      await refused(image(`${PNG.slice(0, -4)}A=A=`), 'messages[0].content[1].image_url.url', 'invalid_image_url');
      const completion = await client.chat.completions.create(image(PNG));
      assert.equal(completion.choices[0]!.finish_reason, 'stop');
    });
  }

  test('claude-sonnet-4-5 through the Responses API: 100k-deep function-call arguments and an image that is not base64 are a 400 naming the field', async () => {
    const before = sent();
    const deep = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        input: [
          { type: 'message', role: 'user', content: 'Go.' },
          { type: 'function_call', call_id: 'call_1', name: 'f', arguments: deepArguments(100_000) },
          { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
        ],
      }),
    });
    const image = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', input: [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,not base64 at all!' }] }] }),
    });
    for (const response of [deep, image]) {
      const body = (await response.json()) as { error?: { type: string; param: string | null } };
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(body.error?.type, 'invalid_request_error');
      assert.ok(body.error?.param !== null && body.error?.param !== undefined && body.error.param.length > 0, 'the field is named');
    }
    assert.equal(sent(), before, 'nothing reached the vendor');
  });
});
