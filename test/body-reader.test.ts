import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { readBody } from '../src/server/body-reader.js';

/*
 * The request body reader: one buffer for the whole body, the refusals Fastify's own reader
 * makes, and memory the garbage collector can see, so large bodies do not pile up.
 */

function read(chunks: Buffer[], contentLength: string | undefined, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => readBody(Readable.from(chunks), contentLength, limit, (error, bytes) => (error ? reject(error) : resolve(bytes!))));
}

describe('request body reader', () => {
  const chunks = Array.from({ length: 5 }, (_, index) => Buffer.alloc(40 * 1024, 0x61 + index));
  const whole = Buffer.concat(chunks);

  test('a body with a Content-Length and a chunked body are read whole', async () => {
    assert.deepEqual(await read(chunks, String(whole.length), whole.length), whole);
    assert.deepEqual(await read(chunks, undefined, whole.length), whole);
  });

  test('a body over the limit or shorter than its Content-Length is refused', async () => {
    await assert.rejects(read(chunks, String(whole.length), whole.length - 1), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
    await assert.rejects(read(chunks, undefined, whole.length - 1), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
    await assert.rejects(read(chunks, String(whole.length + 1), whole.length * 2), { code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' });
    await assert.rejects(read(chunks, String(whole.length - 1), whole.length * 2), { code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' });
  });

  test('large bodies that outlive the young generation are freed without a forced collection', () => {
    // Each 1 MiB body is kept through several scavenges, as the request log's queue keeps
    // one, so it is promoted; only full collections free it then. V8 starts those when the
    // memory it is told of grows: memory it cannot see (shared memory is counted toward no
    // heap) grows by every body. 300 bodies are 315 MB.
    const script = `
      const { Readable } = await import('node:stream');
      const { readBody } = await import(${JSON.stringify(new URL('../src/server/body-reader.ts', import.meta.url).href)});
      const SIZE = 1 << 20;
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const read = () => new Promise((resolve, reject) =>
        readBody(Readable.from(Array(SIZE / chunk.length).fill(chunk)), String(SIZE), 2 * SIZE, (error, bytes) => (error ? reject(error) : resolve(bytes))));
      const held = [];
      let peak = 0;
      for (let i = 0; i < 300; i++) {
        held.push(await read());
        if (held.length > 4) held.shift();
        gc({ type: 'minor' });
        peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      }
      process.stdout.write(String(peak));`;
    const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const peakMb = Number(result.stdout) / 1e6;
    assert.ok(peakMb < 200, `array buffers peaked at ${peakMb.toFixed(0)} MB`);
  });
});
