import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { stringify as toYaml } from 'yaml';
import { MAX_TIMER_MS } from '../src/config/index.js';
import { openStorage } from '../src/storage/index.js';
import { startFakeServer, writeSse, type FakeServer } from './fakes/fake-server.js';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';

const ADMIN_TOKEN = 'mg-admin-fault-test-token-0123456789';
/** The provider key (fake, of no known shape: redacted by value): the planted fault's message carries it, and no output may. */
const PROVIDER_KEY = 'fake-provider-key-for-the-fault-test-0123456789';
const FIXTURE = resolve('test/fixtures/serve-probes.mjs');
const REDIS_URL = process.env.TEST_REDIS_URL;

function completion(model: string) {
  return {
    id: 'chatcmpl-fault',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'fine', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

function chunk(model: string, delta: Record<string, unknown>, finish: string | null) {
  return JSON.stringify({ id: 'chatcmpl-fault', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
}

/** An OpenAI upstream whose streams send their first frame, then wait for `release()`. */
async function startHoldingUpstream(): Promise<{ fake: FakeServer; release: () => void }> {
  const fake = await startFakeServer();
  let release!: () => void;
  const released = new Promise<void>((done) => (release = done));
  fake.on('POST /v1/chat/completions', async (request, response) => {
    const model = String(request.json.model);
    if (request.json.stream !== true) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completion(model)));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    writeSse(response, chunk(model, { role: 'assistant', content: 'still ' }, null));
    await released;
    writeSse(response, chunk(model, { content: 'here' }, 'stop'));
    writeSse(response, '[DONE]');
    response.end();
  });
  return { fake, release };
}

async function createKey(url: string): Promise<string> {
  const created = await fetch(`${url}/admin/v1/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'faults', scopes: ['model:request'] }),
  });
  assert.equal(created.status, 201);
  return ((await created.json()) as { secret: string }).secret;
}

function collectOutput(serve: ServeProcess): { text: () => string } {
  let output = '';
  serve.child.stdout!.on('data', (data: Buffer) => (output += data.toString()));
  serve.child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
  return { text: () => output };
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

async function chatRows(dataDir: string): Promise<{ streaming: number; status: number }[]> {
  const storage = await openStorage({ dataDir });
  try {
    return await storage.db.selectFrom('request_logs').select(['streaming', 'status']).where('endpoint', 'like', '%chat/completions').execute();
  } finally {
    await storage.close();
  }
}

function gatewayEnv(dir: string, upstream: string): Record<string, string> {
  const configPath = join(dir, 'modelgate.yaml');
  // Rows wait in the queue until shutdown, so only the shutdown can have written them. The
  // grace period is the longest a timer can wait: the exit after a fault waits a little more
  // than it, and used to overflow Node's timer and exit at once.
  writeFileSync(configPath, toYaml({ server: { shutdownGraceMs: MAX_TIMER_MS }, logs: { flushIntervalMs: 600_000, batchSize: 100_000, queueSize: 100_000 } }));
  return {
    MODELGATE_PORT: '0',
    MODELGATE_DATA_DIR: join(dir, 'data'),
    MODELGATE_CONFIG: configPath,
    MODELGATE_LOG_LEVEL: 'warn',
    MODELGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    OPENAI_API_KEY: PROVIDER_KEY,
    OPENAI_BASE_URL: `${upstream}/v1`,
    NODE_OPTIONS: `--import ${FIXTURE}`,
    // The faults and kills are aimed at the server process: no launcher in between (helpers/serve-process.ts).
    MODELGATE_RELAUNCH: 'false',
    FAULT_SECRET: PROVIDER_KEY,
    PROBE_PID_DIR: dir,
  };
}

/** New connections are spread over the workers; ten answers in a row means both serve. */
async function bothWorkersAnswer(url: string, key: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let inARow = 0; inARow < 10; ) {
    assert.ok(Date.now() < deadline, 'the workers did not answer ten requests in a row within 10 s');
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'are you there?' }] }),
    });
    await response.arrayBuffer();
    inARow = response.status === 200 ? inARow + 1 : 0;
  }
}

/** The pids the fixture recorded for the workers started so far. */
function workerPids(dir: string): number[] {
  return readdirSync(dir)
    .filter((name) => /^\d+$/.test(name) && readFileSync(join(dir, name), 'utf8') === 'worker')
    .map(Number);
}

/**
 * Runs a gateway with 20 answered chats queued in its log and one stream held open upstream,
 * then `stopBy` it. The grace period is weeks, so a shutdown that waited for it (a client's
 * kept-alive connection, say) would not end within the test's time.
 */
async function shutDownDuringAStream(stopBy: (serve: ServeProcess, output: () => string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-shutdown-'));
  const { fake, release } = await startHoldingUpstream();
  const serve = await startServeProcess(gatewayEnv(dir, fake.url));
  const output = collectOutput(serve);
  try {
    const client = new OpenAI({ apiKey: await createKey(serve.url), baseURL: `${serve.url}/v1`, maxRetries: 0 });
    for (let index = 0; index < 20; index += 1) {
      const answer = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: `question ${index}` }] });
      assert.equal(answer.choices[0]!.message.content, 'fine');
    }
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'a long one' }] });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.value?.choices[0]?.delta.content, 'still ');

    await stopBy(serve, output.text);
    release();
    let rest = '';
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) rest += next.value.choices[0]?.delta.content ?? '';
    assert.equal(rest, 'here');

    const [code] = (await serve.exited) as [number | null];
    const rows = await chatRows(join(dir, 'data'));
    assert.equal(rows.length, 21);
    assert.deepEqual(rows.filter((row) => Number(row.streaming) === 1).map((row) => row.status), [200]);
    assert.ok(!output.text().includes(PROVIDER_KEY), 'the provider key reached the process output');
    return { code, output: output.text() };
  } finally {
    release();
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('serve shuts down', { skip: CLI_NOT_BUILT }, () => {
  test('on SIGTERM: the open stream finishes, the kept-alive connection does not hold the exit, the queued rows are written, exit 0', async () => {
    const { code, output } = await shutDownDuringAStream(async (serve, output) => {
      serve.child.kill('SIGTERM');
      await waitFor(() => output().includes('SIGTERM received, finishing in-flight requests'), 'the signal to be taken in');
    });
    assert.equal(code, 0);
    assert.doesNotMatch(output, /"level":60/);
  });

  test('on an error no code handled: logged without secrets, the open stream finishes, the queued rows are written, exit 1', async () => {
    const { code, output } = await shutDownDuringAStream(async (serve, output) => {
      serve.child.kill('SIGUSR2');
      await waitFor(() => output().includes('"level":60'), 'the fault to be logged');
    });
    assert.equal(code, 1);
    const fatal = JSON.parse(output.split('\n').find((line) => line.includes('"level":60'))!) as { msg: string; err: { message: string; stack: string } };
    assert.match(fatal.msg, /no code handled/);
    assert.match(fatal.err.message, /a fault planted by the test, carrying \[redacted\]/);
    assert.match(output, /an error no code handled, finishing in-flight requests/);
  });

  test('on an error no code handled in a worker: the worker exits 1 and the primary starts a fresh one that serves', { skip: REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-shutdown-'));
    const { fake, release } = await startHoldingUpstream();
    release();
    const serve = await startServeProcess({ ...gatewayEnv(dir, fake.url), MODELGATE_WORKERS: '2', REDIS_URL: REDIS_URL! });
    const output = collectOutput(serve);
    try {
      await waitFor(() => workerPids(dir).length === 2, 'both workers');
      const key = await createKey(serve.url);
      const [victim] = workerPids(dir);
      process.kill(victim!, 'SIGUSR2');
      await waitFor(() => output.text().includes(`worker ${victim} exited (1); starting a new one`), 'the primary to replace the worker');
      await waitFor(() => workerPids(dir).length === 3, 'the new worker');
      await bothWorkersAnswer(serve.url, key);
      assert.ok(!output.text().includes(PROVIDER_KEY), 'the provider key reached the process output');
      assert.equal(await serve.stop(), 0);
    } finally {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a worker that dies while starting', { skip: CLI_NOT_BUILT || (REDIS_URL === undefined ? 'TEST_REDIS_URL is not set' : false) }, () => {
  test('is restarted after 1, 2, 4 … s rather than in a loop, and at once again once workers start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-restarts-'));
    const { fake, release } = await startHoldingUpstream();
    release();
    const block = join(dir, 'block-worker-start');
    const serve = await startServeProcess({ ...gatewayEnv(dir, fake.url), MODELGATE_WORKERS: '2', REDIS_URL: REDIS_URL!, BLOCK_WORKER_START: block });
    const output = collectOutput(serve);
    try {
      await waitFor(() => workerPids(dir).length === 2, 'both workers');
      const key = await createKey(serve.url);
      writeFileSync(block, 'workers exit as they start (a database gone, say)');
      const [victim, survivor] = workerPids(dir);
      process.kill(victim!, 'SIGKILL');
      const failedStarts = () => output.text().match(/exited before it was ready \(1\); starting a new one in \d+ s/g) ?? [];
      await waitFor(() => failedStarts().length === 3, 'three failed starts');
      assert.deepEqual(failedStarts().map((line) => /in (\d+) s/.exec(line)?.[1]), ['1', '2', '4']);
      assert.match(output.text(), new RegExp(`worker ${victim} exited \\(SIGKILL\\); starting a new one`));

      rmSync(block);
      await waitFor(() => workerPids(dir).length === 3, 'a worker that starts');
      await bothWorkersAnswer(serve.url, key);
      // The next death of a ready worker is replaced at once, not after the grown delay.
      process.kill(survivor!, 'SIGKILL');
      await waitFor(() => workerPids(dir).length === 4, 'the survivor replaced');
      assert.equal(failedStarts().length, 3);
      assert.equal(await serve.stop(), 0);
    } finally {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
