import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/*
 * JSON bodies of the model endpoints: parsed once, kept as bytes for pass-through, and
 * refused when they carry a key that poisons prototypes — whichever way it is spelled.
 */

describe('JSON request bodies', () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let key: string;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-test-fake-openai-0123456789' } });
    key = await gateway.createKey({ scopes: ['model:request'] });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const post = (body: string | Buffer) =>
    fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });

  const assertRefused = async (body: string, message: RegExp) => {
    const before = fake.server.requests.length;
    const response = await post(body);
    assert.equal(response.status, 400, body);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'invalid_body');
    assert.match(error.message, message);
    assert.equal(fake.server.requests.length, before, 'nothing reached the provider');
  };

  test('a __proto__ key is refused, also nested and written with escapes', async () => {
    await assertRefused('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"__proto__":{"admin":true}}', /not valid JSON/);
    await assertRefused('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","__proto__":{"x":1}}]}', /not valid JSON/);
    await assertRefused('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"\\u005f_proto__":{"admin":true}}', /not valid JSON/);
  });

  test('a constructor key whose value has a prototype is refused', async () => {
    await assertRefused('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"constructor":{"prototype":{"admin":true}}}', /not valid JSON/);
  });

  test('a body nested deeper than 128 levels is refused with a 400 naming the limit, before it is parsed or forwarded', async () => {
    const chat = (extra: string) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"metadata_x":${extra}}`;
    // 4,000,000 levels in an unknown field (8 MB): parsed for seconds, then forwarded, before the cap.
    const levels = 4_000_000;
    await assertRefused(chat(`${'['.repeat(levels)}${']'.repeat(levels)}`), /more than 128 levels deep/);
    await assertRefused(chat(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`), /more than 128 levels deep/);
    // Brackets inside strings are text, not nesting; 128 levels in all (the body is the first) are accepted.
    const inText = await post(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '['.repeat(1000) }] }));
    assert.equal(inText.status, 200);
    const atLimit = await post(chat(`${'['.repeat(127)}${']'.repeat(127)}`));
    assert.equal(atLimit.status, 200, await atLimit.text());
  });

  test('the words themselves in text are fine', async () => {
    const response = await post(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What does constructor mean? And __proto__? \u00e9' }] }));
    assert.equal(response.status, 200);
  });

  test('text beyond ASCII is read as UTF-8, in small bodies and in those passed through as bytes', async () => {
    const text = 'Grüße, naïve café — 日本語 🙂';
    for (const padding of ['', 'long text '.repeat(60)]) {
      const response = await post(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${padding}${text}` }] }));
      assert.equal(response.status, 200);
      const received = JSON.parse(fake.server.requests.at(-1)!.rawBody.toString('utf8')) as { messages: { content: string }[] };
      assert.equal(received.messages[0]!.content, `${padding}${text}`);
    }
  });

  test('a byte order mark is accepted and not forwarded; an empty body is refused', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `${'long text '.repeat(60)}` }], temperature: 0.5 });
    const response = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
    assert.equal(response.status, 200);
    const received = fake.server.requests.at(-1)!.rawBody;
    assert.equal(received[0], '{'.charCodeAt(0));
    assert.deepEqual(JSON.parse(received.toString('utf8')), JSON.parse(body));
    await assertRefused('', /empty/);
  });

  describe('a body with a long base64 image (its data URI read from the bytes)', () => {
    const image = `data:image/png;base64,${Buffer.alloc(200_000, 7).toString('base64')}`;
    const imageBody = (extra: string) =>
      `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"${image}"}}]}]${extra}}`;

    test('goes upstream unchanged', async () => {
      const response = await post(imageBody(''));
      assert.equal(response.status, 200);
      const received = JSON.parse(fake.server.requests.at(-1)!.rawBody.toString('utf8')) as { messages: { content: { image_url?: { url: string } }[] }[] };
      assert.equal(received.messages[0]!.content[1]!.image_url!.url, image);
    });

    test('still has its prototype keys refused', async () => {
      await assertRefused(imageBody(',"__proto__":{"admin":true}'), /not valid JSON/);
      await assertRefused(imageBody(',"\\u005f_proto__":{"admin":true}'), /not valid JSON/);
      await assertRefused(imageBody(',"constructor":{"prototype":{"admin":true}}'), /not valid JSON/);
    });

    test('is refused when the data URI holds a raw control character', async () => {
      // A raw U+0001 inside the string: JSON.parse refuses it, and so must the cut-out read.
      await assertRefused(imageBody('').replace('base64,', 'base64,\u0001'), /not valid JSON/);
    });
  });

  describe('a body of a megabyte or more (parsed in steps, a turn of the event loop each)', () => {
    // 20,000 short messages: many objects, as a long conversation has, not one long string.
    const messages = Array.from({ length: 20_000 }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `message ${index} ${'x'.repeat(40)}` }));
    const largeBody = (extra = '') => `{"model":"gpt-4o-mini","messages":${JSON.stringify(messages)}${extra},"temperature":0.5}`;

    test('goes upstream as written, with only the gateway members rewritten', async () => {
      const body = largeBody();
      assert.ok(Buffer.byteLength(body) >= 1024 * 1024);
      const response = await post(body);
      assert.equal(response.status, 200, await response.text());
      const received = fake.server.requests.at(-1)!.rawBody.toString('utf8');
      assert.ok(received.includes(`"messages":${JSON.stringify(messages)}`), 'the messages go byte for byte');
      assert.deepEqual(JSON.parse(received), JSON.parse(body));
    });

    test('sent in chunks without a Content-Length, it is read the same', async () => {
      const body = Buffer.from(largeBody());
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let offset = 0; offset < body.length; offset += 64 * 1024) controller.enqueue(body.subarray(offset, offset + 64 * 1024));
          controller.close();
        },
      });
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      assert.equal(response.status, 200, await response.text());
      assert.deepEqual(JSON.parse(fake.server.requests.at(-1)!.rawBody.toString('utf8')), JSON.parse(body.toString('utf8')));
    });

    test('has the same refusals as a small one', async () => {
      await assertRefused(largeBody(',"__proto__":{"admin":true}'), /not valid JSON/);
      await assertRefused(largeBody(',"c\\u006fnstructor":{"prototype":{"admin":true}}'), /not valid JSON/);
      await assertRefused(largeBody().slice(0, -10), /not valid JSON/);
      await assertRefused(largeBody(`,"deep":${'['.repeat(200)}${']'.repeat(200)}`), /more than 128 levels deep/);
    });

    test('has refusals found inside the messages, one of many pieces', async () => {
      const withMessage = (message: string) => largeBody().replace('{"role":"user","content":"message 10000 ', `${message},{"role":"user","content":"message 10000 `);
      await assertRefused(withMessage('{"role":"user","__proto__":{"admin":true}}'), /not valid JSON/);
      await assertRefused(withMessage('{"role":"user","content":tru}'), /not valid JSON/);
      await assertRefused(withMessage('{"role":"user"} {"role":"user"}'), /not valid JSON/);
      await assertRefused(withMessage(`{"role":"user","content":${'['.repeat(130)}${']'.repeat(130)}}`), /more than 128 levels deep/);
    });

    test('a byte order mark in front is accepted and not forwarded', async () => {
      const body = largeBody();
      const response = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
      assert.equal(response.status, 200);
      const received = fake.server.requests.at(-1)!.rawBody;
      assert.equal(received[0], '{'.charCodeAt(0));
      assert.deepEqual(JSON.parse(received.toString('utf8')), JSON.parse(body));
    });
  });
});
