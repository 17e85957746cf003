import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addKnownSecrets, redactText, redactValue, toLogRow, type RequestRecord } from '../src/logs/index.js';

const OUR_KEY = `sk-mg-${'A1b2C3d4'.repeat(5)}`;
// Fake values with vendor key shapes, assembled at run time so the source holds no key-shaped string.
const OPENAI_KEY = ['sk-proj-', 'Abcdefghijklmnopqrstuvwxyz0123456789'].join('');
const ANTHROPIC_KEY = 'sk-ant-api03-Abcdefghijklmnopqrstuvwxyz_0123';
const GOOGLE_KEY = ['AIza', 'SyA1234567890abcdefghijklmnopqrstuv'].join('');
const ADMIN_TOKEN = 'mg-admin-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const SECRETS = [OUR_KEY, OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY, ADMIN_TOKEN, 'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw'];

function assertNoSecret(text: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `found ${secret.slice(0, 12)}… in ${text.slice(0, 300)}`);
}

describe('redaction', () => {
  test('API keys of every kind, admin tokens, bearer tokens and PEM private keys in free text', () => {
    const text = `ours ${OUR_KEY}, openai ${OPENAI_KEY}, anthropic ${ANTHROPIC_KEY}, google ${GOOGLE_KEY}, admin ${ADMIN_TOKEN}, header "Authorization: Bearer abc.def-ghi_jkl123" and ${PEM} end`;
    const redacted = redactText(text);
    assertNoSecret(redacted);
    assert.ok(!redacted.includes('abc.def-ghi_jkl123'));
    assert.match(redacted, /ours sk-mg-\[redacted\], openai \[redacted\], anthropic \[redacted\], google \[redacted\]/);
    assert.match(redacted, /Bearer \[redacted\]/);
    assert.match(redacted, /\[redacted private key\] end$/);
  });

  test('each kind of secret is found on its own in a sentence (text without any is let through untouched)', () => {
    const alone = {
      ours: OUR_KEY,
      openai: OPENAI_KEY,
      anthropic: ANTHROPIC_KEY,
      google: GOOGLE_KEY,
      admin: ADMIN_TOKEN,
      pem: PEM,
      bearer: 'Bearer abc.def-ghi_jkl123',
      basic: 'Basic dXNlcjpwYXNzd29yZA==',
      aws: 'AKIAIOSFODNN7EXAMPLE',
      github: `ghp_${'a1B2'.repeat(9)}`,
      datauri: `data:image/png;base64,${PNG.toString('base64')}`,
    };
    for (const [kind, secret] of Object.entries(alone)) {
      const text = `Please keep ${secret} out of the log, thanks.`;
      const redacted = redactText(text);
      assert.ok(!redacted.includes(secret.slice(secret.indexOf(' ') + 1, secret.length)), `${kind} left in: ${redacted.slice(0, 200)}`);
    }
    const plain = 'Explain in two sentences why the sky is blue, and mention Rayleigh scattering by name.';
    assert.equal(redactText(plain), plain);
  });

  test('credential fields are redacted by name; ordinary fields like max_tokens are kept', () => {
    const redacted = redactValue({
      headers: { Authorization: 'Basic dXNlcjpwYXNz', cookie: 'session=abc', 'x-api-key': 'whatever', 'set-cookie': ['a=b'] },
      password: 'hunter2',
      client_secret: 'shh',
      access_token: 'tok',
      refresh_token: 'tok2',
      api_key: 'k',
      privateKey: 'pk',
      nested: [{ secret: 'deep' }],
      max_tokens: 100,
      usage: { prompt_tokens: 3, total_tokens: 5 },
      empty_password: null,
    }) as Record<string, unknown>;
    assert.deepEqual(redacted.headers, { Authorization: '[redacted]', cookie: '[redacted]', 'x-api-key': '[redacted]', 'set-cookie': '[redacted]' });
    for (const field of ['password', 'client_secret', 'access_token', 'refresh_token', 'api_key', 'privateKey']) {
      assert.equal(redacted[field], '[redacted]', field);
    }
    assert.deepEqual(redacted.nested, [{ secret: '[redacted]' }]);
    assert.equal(redacted.max_tokens, 100);
    assert.deepEqual(redacted.usage, { prompt_tokens: 3, total_tokens: 5 });
    assert.equal(redacted.empty_password, null);
  });

  test('a logprobs entry keeps its token (model output); a credential inside it is still found in the text', () => {
    const logprobs = {
      content: [
        { token: 'Hello', logprob: -0.31, bytes: [72, 101, 108, 108, 111], top_logprobs: [{ token: ' Hi', logprob: -1.2, bytes: [32, 72, 105] }] },
        { token: OPENAI_KEY, logprob: -9.5, bytes: null, top_logprobs: [] },
      ],
    };
    const redacted = redactValue({ choices: [{ index: 0, logprobs }] }) as { choices: [{ logprobs: typeof logprobs }] };
    const [first, second] = redacted.choices[0].logprobs.content;
    assert.equal(first!.token, 'Hello');
    assert.equal(first!.top_logprobs[0]!.token, ' Hi');
    assert.equal(second!.token, '[redacted]');
    // Without a numeric logprob beside it, a field named token is a credential as before.
    assert.deepEqual(redactValue({ token: 'Hello', logprob: '-0.31' }), { token: '[redacted]', logprob: '-0.31' });
    assert.deepEqual(redactValue({ session: { token: 'opaque-value' } }), { session: { token: '[redacted]' } });
  });

  test('generated image base64 (b64_json) becomes a reference: type, bytes, sha256', () => {
    const redacted = redactValue({ created: 1, data: [{ b64_json: PNG.toString('base64'), revised_prompt: 'a cat' }] }) as {
      data: { b64_json: string; revised_prompt: string }[];
    };
    assert.equal(redacted.data[0]!.b64_json, `[omitted image/png: ${PNG.length} bytes, sha256 ${sha256(PNG)}]`);
    assert.equal(redacted.data[0]!.revised_prompt, 'a cat');
  });

  test('data-URI base64 anywhere becomes a reference with its declared mime type', () => {
    const pdf = Buffer.from('%PDF-1.4 fake document body');
    const redacted = redactValue({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
            { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;name=a.pdf;base64,${pdf.toString('base64')}` } },
          ],
        },
      ],
    }) as { messages: { content: [{ text: string }, { image_url: { url: string } }, { file: { file_data: string } }] }[] };
    const [text, image, file] = redacted.messages[0]!.content;
    assert.equal(text.text, 'look');
    assert.equal(image.image_url.url, `[omitted image/png: ${PNG.length} bytes, sha256 ${sha256(PNG)}]`);
    assert.equal(file.file.file_data, `[omitted application/pdf: ${pdf.length} bytes, sha256 ${sha256(pdf)}]`);
  });

  test('bare base64 blobs and binary buffers become references; short base64-looking words stay', () => {
    const blob = Buffer.alloc(2048, 7);
    assert.equal(redactText(blob.toString('base64')), `[omitted application/octet-stream: 2048 bytes, sha256 ${sha256(blob)}]`);
    assert.equal(redactValue(blob), `[omitted application/octet-stream: 2048 bytes, sha256 ${sha256(blob)}]`);
    assert.equal(redactText('HelloWorld'), 'HelloWorld');
  });

  test('encryption-utility payloads: every string is replaced, only its length is kept', () => {
    assert.deepEqual(redactValue({ text: 'my secret prompt', nested: ['enc::v1:abc'] }, { opaqueStrings: true }), {
      text: '[redacted: 16 characters]',
      nested: ['[redacted: 11 characters]'],
    });
  });

  test('copy on write: a value with nothing to redact is returned itself; a change copies only its path and leaves the input alone', () => {
    const clean = { model: 'gpt-4o', messages: [{ role: 'user', content: 'What is the capital of France?' }], n: 1, ok: true, none: null };
    assert.equal(redactValue(clean), clean);
    const input = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: `use ${OPENAI_KEY}` },
      ],
      meta: { tags: ['a'] },
    };
    const before = structuredClone(input);
    const redacted = redactValue(input) as typeof input;
    assert.deepEqual(input, before, 'the input is not changed');
    assert.notEqual(redacted, input);
    assert.notEqual(redacted.messages, input.messages);
    assert.equal(redacted.messages[0], input.messages[0], 'an unchanged sibling is shared, not copied');
    assert.equal(redacted.meta, input.meta);
    assert.deepEqual(Object.keys(redacted), Object.keys(input), 'key order is kept');
    assert.equal(redacted.messages[1]!.content, 'use [redacted]');
    assert.deepEqual(redactValue({ a: 1, headers: { 'x-api-key': OUR_KEY }, z: 2 }), { a: 1, headers: { 'x-api-key': '[redacted]' }, z: 2 });
  });

  test('errors are redacted in message and stack', () => {
    const redacted = redactValue(new Error(`upstream said no to ${OPENAI_KEY}`)) as Record<string, string>;
    assert.equal(redacted.type, 'Error');
    assertNoSecret(JSON.stringify(redacted));
  });
});

function record(overrides: Partial<RequestRecord>): RequestRecord {
  return {
    requestId: 'req_1',
    startedAt: Date.now(),
    endpoint: '/v1/chat/completions',
    platform: null,
    mode: null,
    requestedModel: null,
    resolvedModel: null,
    provider: null,
    streaming: false,
    usage: null,
    imageCount: null,
    audioSeconds: null,
    media: null,
    requestPayload: null,
    responsePayload: null,
    logDetail: null,
    errorCode: null,
    droppedFields: [],
    upstreamLatencyMs: null,
    agent: null,
    extra: null,
    ...overrides,
  };
}

const FINISHED = { caller: { keyId: 'key_1', projectId: 'default', fingerprint: 'key_1…abcd' }, status: 200, latencyMs: 12, cost: { microUsd: 5, startingPrice: false } };

describe('the gateway\'s own credentials, by value', () => {
  // Shapes no pattern knows: a compatible server's key, a storage password with regular-expression characters.
  const LOCAL_KEY = 'local-llm-key-7f3a9c2e5b';
  const PASSWORD = 'p4ss.w*rd(1)+x';
  const SHORT = 'k3y-9x1z';

  test('are found anywhere in text, once added; values shorter than 8 characters are not searched for', () => {
    assert.equal(redactText(`Invalid API key provided: ${LOCAL_KEY}`), `Invalid API key provided: ${LOCAL_KEY}`, 'unknown before it is added');
    addKnownSecrets([LOCAL_KEY, PASSWORD, SHORT, 'abc1234', undefined]);
    assert.equal(redactText(`Invalid API key provided: ${LOCAL_KEY}.`), 'Invalid API key provided: [redacted].');
    assert.equal(redactText(`${LOCAL_KEY}${LOCAL_KEY} and ${PASSWORD}`), '[redacted][redacted] and [redacted]');
    assert.equal(redactText(`password ${PASSWORD.replace('*', 'x')}`), `password ${PASSWORD.replace('*', 'x')}`, 'its characters are literal, not a pattern');
    assert.equal(redactText(`key=${SHORT}`), 'key=[redacted]', 'a short secret in a string shorter than the patterns look at');
    assert.equal(redactText('code abc1234 ok'), 'code abc1234 ok');
    assert.deepEqual(redactValue({ error: { message: `bad key ${LOCAL_KEY}` }, note: 'fine' }), { error: { message: 'bad key [redacted]' }, note: 'fine' });
  });

  test('a secret that contains another is replaced whole', () => {
    addKnownSecrets([`${LOCAL_KEY}-rotated-2`]);
    assert.equal(redactText(`key ${LOCAL_KEY}-rotated-2 end`), 'key [redacted] end');
  });
});

describe('what a log row stores', () => {
  test('payloads, media and detail go through the redaction', () => {
    const row = toLogRow(
      {
        ...FINISHED,
        record: record({
          requestPayload: { model: 'gpt-4o', messages: [{ role: 'user', content: `key ${OPENAI_KEY}` }], api_key: OUR_KEY },
          responsePayload: { data: [{ b64_json: PNG.toString('base64') }] },
          logDetail: { upstream_status: 401, upstream_message: `bad key ${ANTHROPIC_KEY}` },
          media: { images: 1, files: 0, mimeTypes: ['image/png'], bytes: PNG.length },
        }),
      },
      { payloads: true, maxPayloadBytes: 100_000 },
    );
    assertNoSecret(JSON.stringify(row));
    assert.ok(!String(row.response_payload).includes(PNG.toString('base64')));
    assert.equal(JSON.parse(String(row.detail)).upstream_status, 401);
  });

  test('encryption-utility endpoints never store their text, whatever the route put in the record', () => {
    const row = toLogRow(
      { ...FINISHED, record: record({ endpoint: '/v1/utils/encrypt', requestPayload: { text: 'plain secret' }, responsePayload: { encryptedText: 'enc::v1:xyz' } }) },
      { payloads: true, maxPayloadBytes: 100_000 },
    );
    assert.ok(!String(row.request_payload).includes('plain secret'));
    assert.ok(!String(row.response_payload).includes('enc::'));
  });

  test('a response the route already serialised is stored as sent; one that needs redaction is serialised again, redacted', () => {
    const clean = { id: 'chatcmpl-1', choices: [{ message: { content: 'Paris.' } }] };
    const sent = JSON.stringify(clean, null, 1); // distinguishable from the log's own serialisation
    const reused = toLogRow({ ...FINISHED, record: record({ responsePayload: clean, responsePayloadJson: sent }) }, { payloads: true, maxPayloadBytes: 100_000 });
    assert.equal(reused.response_payload, sent);
    const leaky = { id: 'chatcmpl-2', choices: [{ message: { content: `your key is ${OPENAI_KEY}` } }] };
    const redacted = toLogRow({ ...FINISHED, record: record({ responsePayload: leaky, responsePayloadJson: JSON.stringify(leaky) }) }, { payloads: true, maxPayloadBytes: 100_000 });
    assertNoSecret(String(redacted.response_payload));
    assert.equal(JSON.parse(String(redacted.response_payload)).choices[0].message.content, 'your key is [redacted]');
  });

  test('logs.payloads=false keeps no payload; metadata stays', () => {
    const row = toLogRow({ ...FINISHED, record: record({ requestPayload: { messages: [] }, responsePayload: { choices: [] } }) }, { payloads: false, maxPayloadBytes: 100_000 });
    assert.equal(row.request_payload, null);
    assert.equal(row.response_payload, null);
    assert.equal(row.status, 200);
  });

  test('a payload over the size limit keeps a preview, its size and digest', () => {
    const text = 'lorem ipsum '.repeat(1000);
    const row = toLogRow({ ...FINISHED, record: record({ requestPayload: { text } }) }, { payloads: true, maxPayloadBytes: 1000 });
    const stored = JSON.parse(String(row.request_payload));
    assert.equal(stored.truncated, true);
    assert.equal(stored.bytes, JSON.stringify({ text }).length);
    assert.equal(stored.sha256, createHash('sha256').update(JSON.stringify({ text })).digest('hex'));
    assert.ok(stored.preview.startsWith('{"text":"lorem ipsum'));
  });

  test('a payload within the limit in characters but over it in bytes keeps only a preview', () => {
    const text = 'é'.repeat(600); // 600 characters, 1,200 bytes of UTF-8
    const row = toLogRow({ ...FINISHED, record: record({ requestPayload: { text } }) }, { payloads: true, maxPayloadBytes: 1000 });
    const stored = JSON.parse(String(row.request_payload));
    assert.equal(stored.truncated, true);
    assert.equal(stored.bytes, Buffer.byteLength(JSON.stringify({ text })));
  });
});

describe('a large body received as bytes', () => {
  // Long enough for the parse to cut each out of the text (a body needs a quote-free run of 64 KiB).
  const IMAGE = Buffer.concat([PNG, Buffer.alloc(60 * 1024, 7)]);
  const IMAGE_BASE64 = IMAGE.toString('base64');
  const stored = (bytes: Buffer) => toLogRow({ ...FINISHED, record: record({ requestPayloadJson: bytes }) }, { payloads: true, maxPayloadBytes: 10_000_000 }).request_payload;
  const storedParsed = (bytes: Buffer) =>
    toLogRow({ ...FINISHED, record: record({ requestPayload: JSON.parse(bytes.toString('utf8')) as unknown }) }, { payloads: true, maxPayloadBytes: 10_000_000 }).request_payload;

  test('is stored as its parsed body would be, whatever its long strings are', () => {
    const bodies: Record<string, unknown> = {
      'a data URI': { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } }] }] },
      'a data URI with parameters and another declared type': { url: `data:image/jpeg;name=cat.jpg;base64,${IMAGE_BASE64}` },
      'bare base64 (Anthropic\'s source.data)': { source: { type: 'base64', media_type: 'image/png', data: IMAGE_BASE64 } },
      'bare base64 in an array': { parts: ['x', IMAGE_BASE64] },
      'b64_json holding base64': { data: [{ b64_json: IMAGE_BASE64 }] },
      'b64_json holding a data URI': { data: [{ b64_json: `data:image/png;base64,${IMAGE_BASE64}` }] },
      'a credential field': { api_key: IMAGE_BASE64, nested: { password: IMAGE_BASE64 } },
      'base64 of a length no bytes have': { data: IMAGE_BASE64.replace(/=+$/, '').slice(0, -2) + 'A' },
      'url-safe base64': { data: IMAGE_BASE64.replaceAll('+', '-').replaceAll('/', '_') },
      'a data URI that is not base64': { url: `data:text/plain,${'a'.repeat(70 * 1024)}` },
      'a data URI with only its head': { url: `data:image/png;base64,`, pad: 'b'.repeat(70 * 1024) },
      'text with a key in it': { content: `${'lorem ipsum '.repeat(7000)}${OPENAI_KEY} ${'dolor '.repeat(100)}` },
      'JSON text in a string': { arguments: `[${Array.from({ length: 20000 }, (_, index) => index).join(',')}]` },
      'nothing to redact': { content: 'lorem ipsum '.repeat(7000) },
    };
    for (const [label, body] of Object.entries(bodies)) {
      const bytes = Buffer.from(JSON.stringify(body));
      assert.equal(stored(bytes), storedParsed(bytes), label);
    }
  });

  test('media becomes its reference; a body with nothing to redact is stored as the bytes it came as', () => {
    const withImage = Buffer.from(JSON.stringify({ messages: [{ content: [{ image_url: { url: `data:image/png;base64,${IMAGE_BASE64}` } }] }] }));
    const row = JSON.parse(String(stored(withImage))) as { messages: [{ content: [{ image_url: { url: string } }] }] };
    assert.equal(row.messages[0].content[0].image_url.url, `[omitted image/png: ${IMAGE.length} bytes, sha256 ${sha256(IMAGE)}]`);
    const pretty = Buffer.from(JSON.stringify({ content: 'lorem ipsum '.repeat(7000) }, null, 2));
    assert.equal(stored(pretty), pretty.toString('utf8'));
  });

  test('its media is read from the bytes: no string of the image is made', () => {
    const body = Buffer.from(JSON.stringify({ messages: [{ content: [{ image_url: { url: `data:image/png;base64,${Buffer.alloc(1024 * 1024, 3).toString('base64')}` } }] }] }));
    const largeObjects = () => v8.getHeapSpaceStatistics().filter((space) => space.space_name.includes('large_object')).reduce((sum, space) => sum + space.space_used_size, 0);
    const before = largeObjects();
    const row = stored(body);
    // A string of the image (or of the whole body) would be a large object of over a megabyte.
    assert.ok(largeObjects() - before < 512 * 1024, `large objects grew by ${largeObjects() - before} bytes`);
    assert.match(String(row), /\[omitted image\/png: 1048576 bytes, sha256 [0-9a-f]{64}\]/);
  });
});

describe('the process log', () => {
  test('objects, errors and messages are redacted before they are written', () => {
    const script = `
      import { createProcessLogger } from './src/server/process-logger.ts';
      const logger = createProcessLogger('info');
      logger.info({ headers: { authorization: 'Bearer ${OUR_KEY}' }, upstream: { apiKey: '${OPENAI_KEY}' }, note: 'google ${GOOGLE_KEY}' }, 'calling with ${ANTHROPIC_KEY}');
      logger.error({ err: new Error('failed with ${ADMIN_TOKEN}') }, 'request failed');
      logger.warn('pem %s', ${JSON.stringify(PEM)});
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.equal(lines.length, 3);
    assertNoSecret(result.stdout);
    assert.match(lines[1]!, /"err":\{"type":"Error","message":"failed with \[redacted\]"/);
  });
});
