import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FORMATS, type FormatUnderTest, type Outcome } from './helpers/format-clients.js';
import { VENDORS, type NeutralUsage, type RunningVendor, type Vendor } from './helpers/format-vendors.js';
import { loggedRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The conformance suite every public format × provider pair runs: chat completions and the
 * Responses API through the official openai SDK, the Messages API through @anthropic-ai/sdk,
 * each against every vendor's fake (test/helpers/format-vendors.ts). A
 * pair passes through when the provider speaks the format itself (Responses for OpenAI,
 * Messages for Anthropic) and is translated otherwise; either way the caller gets the same:
 * a JSON answer, a stream the SDK's helper assembles, tool-call ids that map both ways, the
 * format's stop reasons, the provider's errors in the format's shape, and usage (cached and
 * reasoning tokens included) in the format's fields and in the request log.
 */

function usageFor(vendor: Vendor): NeutralUsage {
  return { input: 20, output: 9, cached: 8, reasoning: vendor.reportsReasoning ? 3 : 0 };
}

/** The format's usage and the request log's both say what the provider reported. */
async function assertUsage(gateway: TestGateway, outcome: Outcome, expected: NeutralUsage): Promise<void> {
  assert.deepEqual(outcome.usage, { input: expected.input, output: expected.output, cached: expected.cached, reasoning: outcome.usage.reasoning === null ? null : expected.reasoning });
  const record = await loggedRecord(gateway, outcome.requestId);
  assert.deepEqual(
    { prompt: record.usage?.prompt_tokens, completion: record.usage?.completion_tokens, cached: record.usage?.cached_tokens },
    { prompt: expected.input, completion: expected.output, cached: expected.cached },
  );
}

/** The answer is the scripted weather call, under the provider's id. */
function assertWeatherCall(vendor: Vendor, format: FormatUnderTest, called: Outcome): asserts called is Outcome & { toolCall: NonNullable<Outcome['toolCall']> } {
  assert.equal(called.stop, format.stops.tool);
  assert.ok(called.toolCall !== null, 'the answer is a tool call');
  assert.equal(called.toolCall.name, 'get_weather');
  assert.deepEqual(called.toolCall.arguments, { city: 'Paris' });
  // Gemini names no call: the gateway gives each one an id, and maps it back to the function's name.
  if (vendor.toolCallIds) assert.equal(called.toolCall.id, 'call_Wx7dQ2');
  else assert.match(called.toolCall.id, /^call_\w+$/);
}

for (const vendor of VENDORS) {
  for (const descriptor of FORMATS) {
    describe(`${descriptor.name} × ${vendor.name}`, () => {
      let fake: RunningVendor;
      let gateway: TestGateway;
      let format: FormatUnderTest;
      const model = vendor.model;

      before(async () => {
        fake = await vendor.start();
        gateway = await startTestGateway(fake.gateway);
        format = descriptor.make(gateway.url, await gateway.createKey({ scopes: ['model:request'] }));
      });
      after(async () => {
        await gateway?.close();
        await fake?.close();
      });

      test("JSON: the answer, the caller's model, its stop reason, and usage in the format and the log", async () => {
        const usage = usageFor(vendor);
        fake.answer({ kind: 'text', pieces: ['Hello', ' there.'], finish: 'stop', usage });
        const outcome = await format.create(model, 'Say hello.');
        assert.equal(outcome.text, 'Hello there.');
        assert.equal(outcome.model, model);
        assert.equal(outcome.stop, format.stops.stop);
        assert.equal(outcome.toolCall, null);
        await assertUsage(gateway, outcome, usage);
      });

      test("stream: the SDK's helper assembles the answer, usage included", async () => {
        const usage = usageFor(vendor);
        fake.answer({ kind: 'text', pieces: ['Once', ' upon', ' a time.'], finish: 'stop', usage });
        const outcome = await format.stream(model, 'A story?');
        assert.equal(outcome.text, 'Once upon a time.');
        assert.equal(outcome.stop, format.stops.stop);
        assert.deepEqual([outcome.events[0], outcome.events.at(-1)], format.streamBounds);
        await assertUsage(gateway, outcome, usage);
      });

      test("an answer cut by the output limit or stopped by a content filter ends with the format's own reason, JSON or streamed", async () => {
        for (const finish of ['length', 'filtered'] as const) {
          fake.answer({ kind: 'text', pieces: ['It was a dark and'], finish, usage: usageFor(vendor) });
          assert.equal((await format.create(model, 'A long story?')).stop, format.stops[finish], `${finish}, JSON`);
          assert.equal((await format.stream(model, 'A long story?')).stop, format.stops[finish], `${finish}, streamed`);
        }
      });

      test('a tool call round trip: the call id reaches the client and comes back to the provider', async () => {
        const usage = usageFor(vendor);
        fake.answer({ kind: 'tool-call', id: 'call_Wx7dQ2', name: 'get_weather', arguments: { city: 'Paris' }, usage });
        const called = await format.create(model, 'Weather in Paris?', { tools: true });
        assertWeatherCall(vendor, format, called);

        fake.answer({ kind: 'text', pieces: ['Sunny, 21 °C.'], finish: 'stop', usage });
        const answered = await format.answerTool(model, 'Weather in Paris?', called, '{"sky":"sunny","celsius":21}');
        assert.equal(answered.text, 'Sunny, 21 °C.');
        assert.equal(fake.lastToolResultRef(), vendor.toolCallIds ? 'call_Wx7dQ2' : 'get_weather');
      });

      test("a streamed tool call after some text: the SDK's helper assembles both, the call with the provider's id and whole arguments", async () => {
        const preface = 'Let me look that up.';
        fake.answer({ kind: 'tool-call', id: 'call_Wx7dQ2', name: 'get_weather', arguments: { city: 'Paris' }, preface, usage: usageFor(vendor) });
        const streamed = await format.stream(model, 'Weather in Paris?', { tools: true });
        assertWeatherCall(vendor, format, streamed);
        assert.equal(streamed.text, preface);
        const whole = await format.create(model, 'Weather in Paris?', { tools: true });
        assertWeatherCall(vendor, format, whole);
        assert.equal(whole.text, preface);
      });

      test('a request the provider refused (4xx) is the format\'s 400 with its message', async () => {
        fake.fail(400, 'messages: the conversation is too long for this model');
        const message = await format.assertError(format.create(model, 'Hi'), 400);
        assert.match(message, /the conversation is too long for this model/);
      });

      test("a provider failure (5xx) is the format's 502, for a JSON answer and for a stream before its first event", async () => {
        fake.fail(500, 'The server had an error while processing your request.');
        await format.assertError(format.create(model, 'Hi'), 502);
        fake.fail(500, 'The server had an error while processing your request.');
        await format.assertError(format.stream(model, 'Hi'), 502);
      });

      const { nativeOnly, servingHint } = descriptor;
      if (descriptor.native.includes(vendor.name)) {
        test('a field with no equivalent', { skip: `${vendor.name} speaks this format itself: the request goes there as sent` }, () => undefined);
        test('native means native: a field the gateway has never heard of reaches the provider as sent, nothing named dropped', async () => {
          fake.answer({ kind: 'text', pieces: ['Hello.'], finish: 'stop', usage: usageFor(vendor) });
          const invented = { nested: ['a', 1, { deep: true }] };
          const response = await format.post({ model, ...servingHint.body, x_field_invented_for_this_test: invented });
          assert.equal(response.status, 200, await response.clone().text());
          assert.deepEqual(fake.lastBody().x_field_invented_for_this_test, invented);
          assert.equal(response.headers.get('x-modelgate-dropped'), null);
        });
      } else {
        test(`a field that only tunes the vendor's serving is dropped and named (${servingHint.param}), in x-modelgate-dropped and the log`, async () => {
          fake.answer({ kind: 'text', pieces: ['Hello.'], finish: 'stop', usage: usageFor(vendor) });
          const response = await format.post({ model, ...servingHint.body });
          assert.equal(response.status, 200, await response.clone().text());
          assert.equal(response.headers.get('x-modelgate-dropped'), servingHint.param);
          for (const field of servingHint.param.split(',')) assert.equal(fake.lastBody()[field], undefined, `${field} is not sent`);
          const record = await loggedRecord(gateway, response.headers.get('x-request-id')!);
          assert.deepEqual(record.detail.droppedFields, servingHint.param.split(','));
        });

        test(`a field with no equivalent is a 400 naming it (${nativeOnly.param}), and nothing is sent`, async () => {
          fake.answer({ kind: 'text', pieces: ['Hello.'], finish: 'stop', usage: usageFor(vendor) });
          const before = fake.received();
          const response = await format.post({ model, ...nativeOnly.body });
          assert.equal(response.status, 400);
          assert.equal(fake.received(), before, 'nothing reached the provider');
          const body = (await response.json()) as { error?: { param?: string; message?: string } };
          assert.ok(body.error?.message?.includes(nativeOnly.param), `the message names ${nativeOnly.param}: ${body.error?.message}`);
        });
      }
    });
  }
}
