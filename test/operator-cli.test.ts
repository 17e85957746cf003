import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { startOpenAIFake, type OpenAIFake } from './fakes/openai.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';
import { simpleGraph } from './helpers/agents.js';
import { inert, jsonText } from '../src/cli/output.js';

/**
 * The operator's CLI (the built `bin/modelgate.js`, as `npx modelgate …` runs it) against a
 * gateway with a fake OpenAI upstream: what it prints, on which stream, and its exit codes.
 */
const BIN = resolve('bin/modelgate.js');
const SCRIPT = '/usr/bin/script';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let fake: OpenAIFake;
let gateway: TestGateway;
let dir: string;

before(async () => {
  fake = await startOpenAIFake();
  gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.server.url}/v1`, OPENAI_API_KEY: 'sk-fake-openai-0123456789', GEMINI_API_KEY: '' } });
  dir = mkdtempSync(join(tmpdir(), 'modelgate-operator-cli-'));
});
after(async () => {
  await gateway.close();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args, '--url', gateway.url],
      // stdin is not a terminal here (as in a script or CI).
      { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN, MODELGATE_KEY: '', ...env } },
      (error, stdout, stderr) => done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

/** Any control character but a newline: what must never reach a terminal raw. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

const ESCAPES = '\u001b[2J\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007\u009b31m\u202e';

describe('what the CLI prints is inert', () => {
  test('inert writes every control character as a visible escape', () => {
    assert.equal(inert('a\u001b[2Jb\u0007c\u009bd\u202ee\n'), 'a\\x1b[2Jb\\x07c\\x9bd\\u202ee\\x0a');
    assert.equal(inert('line 1\nline\t2\u001b', { keepLines: true }), 'line 1\nline\t2\\x1b');
    const json = jsonText({ model: ESCAPES });
    assert.ok(!RAW_CONTROL.test(json), json);
    assert.deepEqual(JSON.parse(json), { model: ESCAPES }, '--json stays JSON that parses to the same value');
  });

  test('logs list and logs show escape a model value sent with ANSI and OSC sequences', { skip: CLI_NOT_BUILT }, async () => {
    const secret = await gateway.createKey();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: ESCAPES, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 400);
    const requestId = response.headers.get('x-request-id')!;
    await gateway.gateway.context.logs.writer.flush();

    const list = await cli(['logs', 'list', '--limit', '5']);
    assert.equal(list.code, 0, list.stderr);
    assert.ok(list.stdout.includes(requestId));
    const show = await cli(['logs', 'show', requestId]);
    assert.equal(show.code, 0, show.stderr);
    for (const output of [list.stdout, show.stdout]) {
      assert.ok(!RAW_CONTROL.test(output), JSON.stringify(output));
    }
    assert.ok(list.stdout.includes('\\x1b[2J') || show.stdout.includes('\\x1b[2J'), 'the escape is shown, not obeyed');
  });
});

describe('keys', { skip: CLI_NOT_BUILT }, () => {
  test('keys show of an unknown id points to a CLI command, not an admin route', async () => {
    const result = await cli(['keys', 'show', 'key_nope']);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /List keys with modelgate keys list\. \(not_found, HTTP 404/);
    assert.ok(!result.stderr.includes('/admin/v1'));
  });

  test('keys create --rpm 0 says what is valid on create', async () => {
    const result = await cli(['keys', 'create', '--name', 'x', '--scopes', 'model:request', '--rpm', '0']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /expected a whole number above 0; leave the option out for no limit/);
    assert.ok(!result.stderr.includes('"none"'));
  });

  test('keys create --models warns about a value that is no catalog id or alias, with close ones', async () => {
    const result = await cli(['keys', 'create', '--name', 'typo', '--scopes', 'model:request', '--models', 'gpt-4o-mni,service-1', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /warning: --models: "gpt-4o-mni" is no model id or alias this gateway lists .*Did you mean .*"gpt-4o-mini"/);
    assert.ok(!result.stderr.includes('"service-1" is no'));
    assert.deepEqual(JSON.parse(result.stdout).allowed_models, ['gpt-4o-mni', 'service-1'], 'the key is made as asked');
  });

  test('keys revoke without a terminal needs --yes; with it the key is revoked', async () => {
    const created = JSON.parse((await cli(['keys', 'create', '--name', 'doomed', '--scopes', 'model:request', '--json'])).stdout) as { id: string };
    const refused = await cli(['keys', 'revoke', created.id]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /revoking a key is final; pass --yes/);
    assert.equal((await gateway.admin('GET', `/admin/v1/keys/${created.id}`)).body.status, 'active');
    const revoked = await cli(['keys', 'revoke', created.id, '--yes']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stdout, /status\s+revoked/);
  });

  test('keys revoke on a terminal asks, and only "yes" revokes', { skip: existsSync(SCRIPT) ? false : `${SCRIPT} (util-linux) is not installed` }, async () => {
    const created = JSON.parse((await cli(['keys', 'create', '--name', 'asked', '--scopes', 'model:request', '--json'])).stdout) as { id: string };
    const onTerminal = (answer: string) =>
      new Promise<CliResult>((done) => {
        // script(1) gives the command a pseudo-terminal, as an operator's shell has.
        const command = [process.execPath, BIN, 'keys', 'revoke', created.id, '--url', gateway.url].map((part) => `'${part}'`).join(' ');
        const child = execFile(SCRIPT, ['-qec', command, '/dev/null'], { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } }, (error, stdout, stderr) =>
          done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
        );
        child.stdin!.end(`${answer}\n`);
      });
    const declined = await onTerminal('no');
    assert.equal(declined.code, 1);
    assert.match(declined.stdout, new RegExp(`Revoke key ${created.id} "asked" \\(project default\\)\\? .*Type yes to revoke`));
    assert.match(declined.stdout, /not revoked/);
    assert.equal((await gateway.admin('GET', `/admin/v1/keys/${created.id}`)).body.status, 'active');
    const confirmed = await onTerminal('yes');
    assert.equal(confirmed.code, 0, confirmed.stdout);
    assert.equal((await gateway.admin('GET', `/admin/v1/keys/${created.id}`)).body.status, 'revoked');
  });
});

describe('logs and usage', { skip: CLI_NOT_BUILT }, () => {
  test('logs list and usage --by key show key names beside ids; usage --by project', async () => {
    const created = JSON.parse((await cli(['keys', 'create', '--name', 'named-key', '--scopes', 'model:request', '--project', 'team-x', '--json'])).stdout) as {
      id: string;
      secret: string;
    };
    fake.scriptChat({ kind: 'reply', text: 'hi', usage: { promptTokens: 2, completionTokens: 1 } });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200);
    await gateway.gateway.context.logs.writer.flush();

    const list = await cli(['logs', 'list', '--key', created.id]);
    assert.equal(list.code, 0, list.stderr);
    assert.ok(list.stdout.includes(`${created.id} (named-key)`), list.stdout);
    const byKey = await cli(['usage', '--by', 'key']);
    assert.ok(byKey.stdout.includes(`${created.id} (named-key)`), byKey.stdout);
    const byProject = await cli(['usage', '--by', 'project']);
    assert.equal(byProject.code, 0, byProject.stderr);
    assert.match(byProject.stdout, /^PROJECT\s+REQUESTS/);
    assert.match(byProject.stdout, /\nteam-x\s+1\s+0\s+2\s+1\s+3/);
  });

  test('logs list names the agent of an agent run', async () => {
    const saved = await gateway.admin('PUT', '/admin/v1/agents/greeter', { graph: simpleGraph({}, 'gpt-4o-mini') });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal((await gateway.admin('POST', '/admin/v1/agents/greeter/publish', {})).status, 200);
    const secret = await gateway.createKey();
    fake.scriptChat({ kind: 'reply', text: 'hello', usage: { promptTokens: 2, completionTokens: 1 } });
    const response = await fetch(`${gateway.url}/v1/agents/greeter/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hi' }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const requestId = response.headers.get('x-request-id')!;
    await gateway.gateway.context.logs.writer.flush();

    const list = await cli(['logs', 'list', '--limit', '5']);
    assert.equal(list.code, 0, list.stderr);
    const line = list.stdout.split('\n').find((candidate) => candidate.includes(requestId));
    assert.match(line ?? '', /agent greeter/, list.stdout);
    const show = await cli(['logs', 'show', requestId]);
    assert.match(show.stdout, /^agent\s+greeter$/m, show.stdout);
  });

  test('logs export needs no --format', async () => {
    const result = await cli(['logs', 'export', '--since', '1h']);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.ok(lines.length > 0);
    assert.ok(lines.every((line) => typeof (JSON.parse(line) as { request_id: string }).request_id === 'string'));
  });
});

describe('agents test', { skip: CLI_NOT_BUILT }, () => {
  const graph = {
    version: 1,
    name: 'Echo',
    entry: 'input',
    nodes: [
      { id: 'input', type: 'input', next: 'talk' },
      { id: 'talk', type: 'llm', config: { model: 'gpt-4o-mini' }, next: 'out' },
      { id: 'out', type: 'output', config: { text: 'Echo: {{talk.content}}' } },
    ],
  };
  before(async () => {
    const file = join(dir, 'echo.json');
    writeFileSync(file, JSON.stringify(graph));
    assert.equal((await cli(['agents', 'save', file, '--slug', 'echo-op'])).code, 0);
  });

  test('reads the key from MODELGATE_KEY or --key-file; --key still works with a warning', async () => {
    const key = await gateway.createKey({ scopes: ['agents:execute'] });
    fake.scriptChat({ kind: 'reply', text: 'one', usage: { promptTokens: 1, completionTokens: 1 } });
    const fromEnv = await cli(['agents', 'test', 'echo-op', '--input', 'hi'], { MODELGATE_KEY: key });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.match(fromEnv.stdout, /^Echo: one/);
    assert.match(fromEnv.stdout, /agent\s+echo-op/);
    assert.equal(fromEnv.stderr, '');

    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    fake.scriptChat({ kind: 'reply', text: 'two', usage: { promptTokens: 1, completionTokens: 1 } });
    const fromFile = await cli(['agents', 'test', 'echo-op', '--key-file', keyFile, '--input', 'hi']);
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.match(fromFile.stdout, /^Echo: two/);

    fake.scriptChat({ kind: 'reply', text: 'three', usage: { promptTokens: 1, completionTokens: 1 } });
    const onLine = await cli(['agents', 'test', 'echo-op', '--key', key, '--input', 'hi']);
    assert.equal(onLine.code, 0, onLine.stderr);
    assert.match(onLine.stderr, /warning: --key puts the secret in shell history and in ps; set MODELGATE_KEY or pass --key-file/);

    const none = await cli(['agents', 'test', 'echo-op', '--input', 'hi']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no key to run the test as: set MODELGATE_KEY, or pass --key-file/);
  });

  test('a key without agents:execute gets 403 insufficient_scope', async () => {
    const key = await gateway.createKey({ scopes: ['model:request'] });
    const result = await cli(['agents', 'test', 'echo-op', '--input', 'hi'], { MODELGATE_KEY: key });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /insufficient_scope, HTTP 403/);
  });
});

describe('modelgate status', { skip: CLI_NOT_BUILT }, () => {
  test('shows health, version, storage, Redis, providers and workers', async () => {
    const result = await cli(['status']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`gateway\\s+${gateway.url}  ok`));
    assert.match(result.stdout, /version\s+\d+\.\d+\.\d+ \(API 1\.4\.2\)/);
    assert.match(result.stdout, /storage\s+SQLite in .* \(reachable\)/);
    assert.match(result.stdout, /redis\s+none/);
    assert.match(result.stdout, /workers\s+1 /);
    assert.match(result.stdout, /openai\s+ok/);
    assert.match(result.stdout, /gemini\s+not configured: set GEMINI_API_KEY/);
    const json = JSON.parse((await cli(['status', '--json'])).stdout) as { status: string; providers: { name: string }[] };
    assert.equal(json.status, 'ok');
  });

  test('exits 2 when a provider fails', async () => {
    fake.failNext('/v1/chat/completions', 401, 'Incorrect API key provided');
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await gateway.createKey()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 502);
    const result = await cli(['status']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stdout, /DEGRADED/);
    assert.match(result.stdout, /openai\s+FAILING: refuses the gateway credential since \S+ \(1 call\)/);
  });
});
