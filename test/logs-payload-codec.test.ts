import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { packPayloads, unpackPayloads } from '../src/logs/payload-codec.js';

// zlib's output buffer is sized to each record's text; a record whose deflated form is larger
// takes further buffers, joined. Every size must come back as it was packed.
test('payloads of every size come back as they were packed, whatever number of output buffers deflate took', () => {
  const cases: [string | null, string | null][] = [
    [null, '{}'],
    ['{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}', null],
    ['', ''],
    // Incompressible text larger than one buffer (up to 16 KiB) and than several.
    [JSON.stringify({ data: randomBytes(24_000).toString('base64') }), JSON.stringify({ data: randomBytes(70_000).toString('base64') })],
    // Text that deflates to just over and under half its size.
    [randomBytes(200).toString('hex'), randomBytes(129).toString('base64')],
    // Long and highly repetitive: many times smaller than its text.
    [JSON.stringify({ messages: Array.from({ length: 5000 }, (_, index) => ({ role: 'user', content: `turn ${index}` })) }), '{"choices":[]}'],
  ];
  for (const [request, response] of cases) {
    const packed = packPayloads(request, response)!;
    assert.deepEqual(unpackPayloads(packed), { request: request === '' ? null : request, response: response === '' ? null : response });
  }
  assert.equal(packPayloads(null, undefined), null);
});
