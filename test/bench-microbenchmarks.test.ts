import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

/**
 * The stream microbenchmarks (docs/performance.md) load the built modules the way the gateway
 * wires them; a change to those modules' seams must keep them running, or the figures the
 * docs ask for cannot be taken. Each runs a handful of streams here, not for its figures.
 */
const run = promisify(execFile);
const bench = join(import.meta.dirname, '..', 'bench');
const notBuilt = existsSync(join(import.meta.dirname, '..', 'dist', 'server', 'routes', 'stream-relay.js')) ? false : 'dist/ is not built (npm test builds it; or run npm run build)';

describe('the stream microbenchmarks run against the build', { skip: notBuilt }, () => {
  test('bench/stream-events.mjs relays the 22-event stream through a request call and prints its figure', async () => {
    const { stdout } = await run(process.execPath, [join(bench, 'stream-events.mjs')], { env: { ...process.env, STREAMS: '20', RUNS: '1' } });
    assert.match(stdout, /^this build\s+median \d+\.\d\d µs per stream of 24 network chunks/m);
  });

  test('bench/stream-mapping.mjs maps the Anthropic and Gemini streams and prints both figures', async () => {
    const { stdout } = await run(process.execPath, [join(bench, 'stream-mapping.mjs')], { env: { ...process.env, STREAMS: '20', RUNS: '1' } });
    assert.match(stdout, /^anthropic, this build\s+median \d+\.\d\d µs per stream/m);
    assert.match(stdout, /^gemini, this build\s+median \d+\.\d\d µs per stream/m);
  });
});
