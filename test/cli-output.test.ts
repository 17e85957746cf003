import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';

/** How the CLI reads to an operator: its version, and sums of money with sensible precision. */

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ['bin/modelgate.js', ...args], { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

describe('modelgate --version', { skip: CLI_NOT_BUILT }, () => {
  test("prints the package's version and nothing else", async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const shown = await cli(flag);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(shown.stdout, `${version}\n`);
    }
    assert.match((await cli('--help')).stdout, /--version\s+print the version of modelgate/);
  });
});

describe('money in the CLI', { skip: CLI_NOT_BUILT }, () => {
  let gateway: TestGateway;
  const started = Date.now() - 60_000;

  before(async () => {
    gateway = await startTestGateway();
    await gateway.gateway.context.logs.store.insertBatch([
      { request_id: 'req_tiered', started_at: started, endpoint: '/v1/chat/completions', status: 200, latency_ms: 12, streaming: 0, resolved_model: 'gpt-4o', cost_micro_usd: 11_000, cost_flag: 'starting_price' },
      { request_id: 'req_dearer', started_at: started + 1, endpoint: '/v1/chat/completions', status: 200, latency_ms: 12, streaming: 0, resolved_model: 'gpt-4o', cost_micro_usd: 2_500_000 },
    ]);
  });
  after(async () => {
    await gateway?.close();
  });

  const withGateway = (...args: string[]) => cli(...args, '--url', gateway.url);

  test('a starting price reads "from $0.011", not "0.011000 (from)"', async () => {
    const shown = await withGateway('logs', 'show', 'req_tiered');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^cost\s+from \$0\.011$/m);
    const list = await withGateway('logs', 'list');
    assert.match(list.stdout, /req_tiered.*from \$0\.011$/m);
    assert.match(list.stdout, /req_dearer.*\s\$2\.50$/m);
    assert.doesNotMatch(list.stdout, /0\.011000|2\.500000/);
  });

  test('usage totals and a monthly cost limit read in dollars and cents', async () => {
    const usage = await withGateway('usage', '--by', 'model');
    assert.equal(usage.code, 0, usage.stderr);
    assert.match(usage.stdout, /^gpt-4o\s.*\s\$2\.51\s+\d+\s/m);
    const created = await withGateway('keys', 'create', '--name', 'budgeted', '--scopes', 'model:request', '--monthly-cost', '5');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^monthly cost\s+\$5\.00$/m);
    const listed = await withGateway('keys', 'list');
    assert.match(listed.stdout, /budgeted.*\$5\.00/);
  });
});
