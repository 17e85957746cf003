import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';
import { adminCli } from './helpers/admin-cli.js';

/** `modelgate cache clear` and the savings `modelgate usage` shows, as an operator runs them. */
const cli = adminCli;

describe('modelgate cache clear', { skip: CLI_NOT_BUILT }, () => {
  let fake: OpenAIFake;
  let gateway: TestGateway;
  let classClient: OpenAI;
  let otherClient: OpenAI;

  before(async () => {
    fake = await startOpenAIFake();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-upstream-cache-cli-test' },
      configFile: { cache: [{ name: 'classes', apply: { projects: ['class-101', 'class-102'] } }] },
    });
    await gateway.gateway.context.keys.projects.create('class-101');
    await gateway.gateway.context.keys.projects.create('class-102');
    classClient = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId: 'class-101' }), maxRetries: 0 });
    otherClient = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: await gateway.createKey({ projectId: 'class-102' }), maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await fake?.server.close();
  });

  const status = async (client: OpenAI) =>
    (await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Same question' }] }).withResponse()).response.headers.get(
      'x-modelgate-cache',
    );

  test("--project clears that project's answers only; usage shows the hits and savings", async () => {
    await status(classClient);
    await status(otherClient);
    assert.equal(await status(classClient), 'hit');
    await gateway.gateway.context.logs.writer.flush();
    const usage = await cli(gateway, 'usage', '--by', 'project');
    assert.equal(usage.code, 0, usage.stderr);
    assert.match(usage.stdout, /CACHE HITS {2}SAVED\b/);
    assert.match(usage.stdout.split('\n').find((line) => line.startsWith('class-101')) ?? '', /\s1\s+\$0\.0000\d+\s*$/);

    const cleared = await cli(gateway, 'cache', 'clear', '--project', 'class-101');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout, /Cleared 1 cached answer of project class-101 on this instance/);
    assert.equal(await status(classClient), 'miss');
    assert.equal(await status(otherClient), 'hit');

    const json = await cli(gateway, 'cache', 'clear', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), { object: 'cache.cleared', project: null, cleared: 2, store: 'memory' });
  });

  test('an unknown project is an error naming it', async () => {
    const result = await cli(gateway, 'cache', 'clear', '--project', 'no-such-project');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /no-such-project/);
  });
});
