import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { TEST_ADMIN_TOKEN, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';

/** `modelgate providers list|add|edit|remove|test`, as an operator runs them; the secret piped in, never an argument, never printed. */

const SECRET = `sk-proj-${'FAKEfake00'.repeat(4)}`;

function cli(gateway: TestGateway, input: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      ['bin/modelgate.js', 'providers', ...args, '--url', gateway.url],
      { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

describe('modelgate providers', { skip: CLI_NOT_BUILT }, () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({ env: { OPENAI_API_KEY: '' } });
  });
  after(async () => {
    await gateway?.close();
    await fake?.close();
  });

  test('adds a credential from standard input, lists, edits, tests and removes it', async () => {
    const added = await cli(gateway, `${SECRET}\n`, 'add', 'openai', '--kind', 'openai', '--set', `baseUrl=${fake.server.url}/v1`, '--secret', 'apiKey');
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /source\s+stored \(admin API\)/);
    assert.match(added.stdout, /apiKey sha256:[0-9a-f]{8} …ke00/);

    const listed = await cli(gateway, '', 'list');
    assert.match(listed.stdout, /anthropic\s+anthropic\s+env \(environment: ANTHROPIC_API_KEY\)\s+callable/);
    assert.match(listed.stdout, /openai\s+openai\s+stored \(admin API\)\s+callable/);
    const json = JSON.parse((await cli(gateway, '', 'list', '--json')).stdout) as { data: { name: string; read_only: boolean }[] };
    assert.equal(json.data.find((entry) => entry.name === 'anthropic')?.read_only, true);

    const tested = await cli(gateway, '', 'test', 'openai');
    assert.equal(tested.code, 0, tested.stderr);
    assert.match(tested.stdout, /^ok: \S+ answered in \d+ ms/);
    assert.equal(fake.chatRequests().at(-1)?.credential, SECRET);

    const refused = await cli(gateway, '', 'edit', 'openai', '--set', 'baseUrl=ftp://example.com');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /invalid setting settings\.baseUrl/);
    const readOnly = await cli(gateway, '', 'edit', 'anthropic', '--set', 'baseUrl=https://example.com');
    assert.match(readOnly.stderr, /comes from the environment \(ANTHROPIC_API_KEY\)/);
    fake.failNext('/v1/chat/completions', 401, 'Incorrect API key provided');
    const failed = await cli(gateway, '', 'test', 'openai');
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /^failed after \d+ ms/);

    const removed = await cli(gateway, '', 'remove', 'openai');
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /Removed provider openai/);
    for (const output of [added, listed, tested, refused, failed, removed]) assert.ok(!`${output.stdout}${output.stderr}`.includes(SECRET), 'the secret was printed');
  });
});
