import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';

/** `modelgate agents …` run from source (tsx) against a gateway with a fake OpenAI upstream. */
const MAIN = resolve('src/cli/main.ts');

let fake: OpenAIFake;
let gateway: TestGateway;
let dir: string;
let key: string;

before(async () => {
  fake = await startOpenAIFake();
  gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789' } });
  key = await gateway.createKey({ scopes: ['agents:execute'] });
  dir = mkdtempSync(join(tmpdir(), 'modelgate-agents-cli-'));
});
after(async () => {
  await gateway.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function agents(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, 'agents', ...args, '--url', gateway.url],
      { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

test('validate, save, test, publish and list from the command line', async () => {
  const good = join(dir, 'good.json');
  const bad = join(dir, 'bad.json');
  writeFileSync(good, JSON.stringify({
    version: 1, name: 'Echo', entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'gpt-4o-mini' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: 'Echo: {{talk.content}}' } },
    ],
  }));
  writeFileSync(bad, JSON.stringify({ version: 1, name: 'Bad', entry: 'start', nodes: [{ id: 'input', type: 'subagent' }] }));

  const invalid = await agents('validate', bad);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stdout, /input\s+type\s+subagent nodes are reserved/);
  assert.match(invalid.stdout, /\(graph\)\s+entry\s+names "start"/);
  assert.match(invalid.stderr, /has \d+ problem\(s\)/);

  assert.match((await agents('validate', good)).stdout, /valid/);
  const saved = await agents('save', good, '--slug', 'echo');
  assert.equal(saved.code, 0, saved.stderr);
  assert.match(saved.stdout, /saved echo draft 1/);

  fake.scriptChat({ kind: 'reply', text: 'hi there', usage: { promptTokens: 3, completionTokens: 2 } });
  const tested = await agents('test', 'echo', '--key', key, '--input', 'hello');
  assert.equal(tested.code, 0, tested.stderr);
  assert.match(tested.stdout, /^Echo: hi there/);
  assert.match(tested.stdout, /tokens\s+5/);

  const published = await agents('publish', 'echo');
  assert.match(published.stdout, /published echo version 1 \(draft 1\)/);
  const listed = await agents('list', '--json');
  const list = JSON.parse(listed.stdout);
  assert.deepEqual(list.data.map((agent: { slug: string; published_version: number }) => [agent.slug, agent.published_version]), [['echo', 1]]);
  assert.match((await agents('list')).stdout, /SLUG\s+PROJECT\s+NAME/);

  const missing = await agents('publish', 'nope');
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no agent "nope".*agent_not_found, HTTP 404/);
});
