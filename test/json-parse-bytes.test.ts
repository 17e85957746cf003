import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { parseJsonBytes } from '../src/json/parse-bytes.js';

/*
 * parseJsonBytes must give exactly what JSON.parse of the decoded bytes gives, errors
 * included, while reading long plain strings straight from the bytes.
 */

/** Long enough to be cut out on its own (a body needs a quote-free run of 64 KiB). */
const LONG = 66 * 1024;

/** JSON.parse's verdict on the bytes: the value, or the fact that it throws. */
function reference(bytes: Buffer): { value: unknown } | 'throws' {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch {
    return 'throws';
  }
}

function assertSameAsJsonParse(bytes: Buffer, label: string): void {
  const expected = reference(bytes);
  if (expected === 'throws') {
    assert.throws(() => parseJsonBytes(bytes), SyntaxError, label);
  } else {
    assert.deepEqual(parseJsonBytes(bytes).value, expected.value, label);
  }
}

/** The bytes at each of four alignments, so the word-at-a-time check meets every edge case. */
function atEachAlignment(bytes: Buffer): Buffer[] {
  return [0, 1, 2, 3].map((offset) => {
    const backing = Buffer.alloc(bytes.length + offset);
    bytes.copy(backing, offset);
    return backing.subarray(offset);
  });
}

function base64Of(length: number, seed: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let text = '';
  let state = seed;
  for (let index = 0; index < length; index += 1) {
    state = (state * 1103515245 + 12345) % 2147483648;
    text += alphabet[state % 64];
  }
  return text;
}

describe('parseJsonBytes', () => {
  test('a long base64 data URI is read from the bytes: JSON.parse never sees it', () => {
    const uri = `data:image/png;base64,${base64Of(300_000, 1)}`;
    const body = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: uri } }] }] };
    for (const bytes of atEachAlignment(Buffer.from(JSON.stringify(body)))) {
      const parsed = parseJsonBytes(bytes);
      assert.deepEqual(parsed.value, body);
      assert.ok(parsed.text.length < 1000, 'the long string was cut out of the text JSON.parse read');
      assert.ok(!parsed.text.includes(uri.slice(0, 100)));
    }
  });

  test('several long strings, in arrays, nested and next to small ones, come back in their places', () => {
    const body = {
      a: [base64Of(LONG, 2), 'short', { b: base64Of(LONG * 2, 3), c: [1, 2, { d: base64Of(LONG + 1, 4) }] }],
      e: 'x'.repeat(LONG),
      f: null,
      g: [true, false, 1.5e3],
    };
    for (const bytes of atEachAlignment(Buffer.from(JSON.stringify(body, null, 2)))) {
      const parsed = parseJsonBytes(bytes);
      assert.deepEqual(parsed.value, body);
      assert.ok(parsed.text.length < 1000);
    }
  });

  test('a raw control character inside a long string is refused, wherever it falls', () => {
    const content = base64Of(LONG + 7, 5);
    for (const position of [0, 1, 2, 3, 4, 5, 1000, LONG - 1, LONG + 3, LONG + 6]) {
      for (const control of ['\t', '\n', '\u0000', '\u001f']) {
        const text = `${content.slice(0, position)}${control}${content.slice(position + 1)}`;
        for (const bytes of atEachAlignment(Buffer.from(`{"url":"${text}"}`))) {
          assert.throws(() => parseJsonBytes(bytes), SyntaxError, `control ${control.charCodeAt(0)} at ${position}`);
        }
      }
    }
  });

  test('long strings with escapes, beyond ASCII, or with bytes that are not UTF-8 read as JSON.parse reads them', () => {
    const long = base64Of(LONG, 6);
    const cases: [string, Buffer][] = [
      ['escaped quote', Buffer.from(JSON.stringify({ s: `${long}"${long}` }))],
      ['escaped newline', Buffer.from(JSON.stringify({ s: `${long}\n${long}` }))],
      ['unicode escape', Buffer.from(`{"s":"${long}\\u00e9${long}"}`)],
      ['UTF-8 text', Buffer.from(JSON.stringify({ s: `Grüße 日本語 🙂 ${long}` }))],
      ['DEL is allowed unescaped', Buffer.from(`{"s":"${long}\u007f"}`)],
      ['invalid UTF-8', Buffer.concat([Buffer.from(`{"s":"${long}`), Buffer.from([0xff, 0xc3]), Buffer.from(`${long}"}`)])],
      ['a long key', Buffer.from(JSON.stringify({ [long]: 1, other: long }))],
      ['a long top-level string', Buffer.from(JSON.stringify(long))],
      ['an array of long strings', Buffer.from(JSON.stringify([long, long, long]))],
    ];
    for (const [label, bytes] of cases) assertSameAsJsonParse(bytes, label);
  });

  test('text that is not JSON around long strings is refused as JSON.parse refuses it', () => {
    const long = base64Of(LONG, 7);
    const cases = [
      `{"a":"${long}" "b":1}`,
      `{"a":"${long}",}`,
      `["${long}"`,
      `{"a":"${long}`,
      `{"a":"${long}"}}`,
      `{"a":"${long}"} trailing`,
      `{"a":"${long}\\x"}`,
      `{"a":'${long}'}`,
    ];
    for (const text of cases) assert.throws(() => parseJsonBytes(Buffer.from(text)), SyntaxError, text.slice(0, 20));
  });

  test('bodies with many small strings and no long one are parsed as they are', () => {
    const body = { messages: Array.from({ length: 3000 }, (_, index) => ({ role: 'user', content: `message ${index} ${'words '.repeat(10)}` })) };
    const parsed = parseJsonBytes(Buffer.from(JSON.stringify(body)));
    assert.deepEqual(parsed.value, body);
    assert.equal(parsed.text, JSON.stringify(body));
  });

  test('random bodies and random corruptions: always JSON.parse\'s verdict', () => {
    let state = 42;
    const random = (limit: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % limit;
    };
    for (let round = 0; round < 60; round += 1) {
      const body = {
        model: 'm',
        parts: Array.from({ length: 1 + random(4) }, (_, index) => (random(2) === 0 ? base64Of(LONG + random(LONG), round * 10 + index) : { n: random(1000), s: 'small' })),
      };
      const bytes = Buffer.from(JSON.stringify(body));
      assertSameAsJsonParse(bytes, `round ${round}`);
      for (let corruption = 0; corruption < 4; corruption += 1) {
        const corrupted = Buffer.from(bytes);
        corrupted[random(corrupted.length)] = [0x00, 0x09, 0x22, 0x5c, 0x7b, 0x5d, 0xc3, 0x2c][random(8)]!;
        assertSameAsJsonParse(corrupted, `round ${round}, corruption ${corruption}`);
      }
    }
  });
});

describe('a long string put back as something else', () => {
  test('each cut-out string is handed over as its bytes with its member name (an index in an array); short ones are left as strings', () => {
    const image = base64Of(LONG, 7);
    const bare = base64Of(LONG + 3, 8);
    const body = { model: 'm', short: 'small', url: image, parts: [bare, { text: 'hi' }] };
    const seen: [string, string][] = [];
    const { value } = parseJsonBytes(Buffer.from(JSON.stringify(body)), (name, bytes) => {
      seen.push([name, bytes.toString('latin1')]);
      return `<${name}:${bytes.length}>`;
    });
    assert.deepEqual(seen.sort(), [['0', bare], ['url', image]]);
    assert.deepEqual(value, { model: 'm', short: 'small', url: `<url:${LONG}>`, parts: [`<0:${LONG + 3}>`, { text: 'hi' }] });
  });

  test('a body the stand-ins cannot be put back into is parsed whole, every string as itself', () => {
    // A top-level string: cut out, but there is no object to put it back into.
    const text = base64Of(LONG * 2, 9);
    const { value } = parseJsonBytes(Buffer.from(JSON.stringify(text)), () => assert.fail('not called for a body parsed whole'));
    assert.equal(value, text);
  });
});

test('a long string of a megabyte or more is kept off the JavaScript heap (its pages would all be fresh)', () => {
  const image = base64Of(1536 * 1024, 11);
  const bytes = Buffer.from(JSON.stringify({ messages: [{ content: [{ image_url: { url: image } }] }] }));
  const largeObjects = () => v8.getHeapSpaceStatistics().filter((space) => space.space_name.includes('large_object')).reduce((sum, space) => sum + space.space_used_size, 0);
  const before = largeObjects();
  const { value } = parseJsonBytes(bytes);
  assert.ok(largeObjects() - before < 512 * 1024, `large objects grew by ${largeObjects() - before} bytes`);
  assert.equal((value as { messages: [{ content: [{ image_url: { url: string } }] }] }).messages[0].content[0].image_url.url, image);
});
