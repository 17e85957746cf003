import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify as toYaml } from 'yaml';
import { TEST_ADMIN_TOKEN } from './helpers/gateway.js';
import { CLI_NOT_BUILT, startServeProcess, type ServeProcess } from './helpers/serve-process.js';

/** `modelgate audit …` as an operator runs it, against `modelgate serve`, whose reloads of its config file are audited too. */

function cli(url: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ['bin/modelgate.js', ...args, '--url', url], { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

async function admin(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test reads the shapes it asserts
  return { status: response.status, body: (await response.json()) as any };
}

describe('modelgate audit', { skip: CLI_NOT_BUILT }, () => {
  let dir: string;
  let file: string;
  let serve: ServeProcess;
  let keyId: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'modelgate-audit-cli-'));
    file = join(dir, 'modelgate.yaml');
    writeFileSync(file, toYaml({ routing: [{ model: 'gpt-4o-mini', retries: 0 }] }));
    serve = await startServeProcess({
      MODELGATE_CONFIG: file,
      MODELGATE_PORT: '0',
      MODELGATE_DATA_DIR: join(dir, 'data'),
      MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MODELGATE_RELAUNCH: 'false',
      OPENAI_API_KEY: 'sk-placeholder-openai',
    });
    const created = await admin(serve.url, 'POST', '/keys', { name: 'ci-key', scopes: ['model:request'] });
    keyId = created.body.id;
    await admin(serve.url, 'POST', `/keys/${keyId}/pause`);
  });
  after(async () => {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a changed config file is recorded as config.reload by system, with the routing before and after', async () => {
    writeFileSync(file, toYaml({ routing: [{ model: 'gpt-4o-mini', retries: 2 }] }));
    let entries: { actor: { name: string }; before: { routing: { retries: number }[] }; after: { routing: { retries: number }[]; trigger: string } }[] = [];
    for (let attempt = 0; attempt < 200 && entries.length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      entries = (await admin(serve.url, 'GET', '/audit?action=config.reload')).body.data;
    }
    assert.equal(entries.length, 1, serve.output());
    const [entry] = entries;
    assert.equal(entry!.actor.name, 'system');
    assert.equal(entry!.after.trigger, 'config file changed');
    assert.deepEqual([entry!.before.routing[0]!.retries, entry!.after.routing[0]!.retries], [0, 2]);
  });

  test('audit: a table by default (filters passed on), the admin JSON with --json', async () => {
    const table = await cli(serve.url, 'audit', '--action', 'key');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^TIME\s+ACTOR\s+ACTION\s+TARGET\s+CHANGED/);
    assert.match(table.stdout, new RegExp(`admin-token\\s+key\\.pause\\s+key ${keyId}\\s+status`));
    assert.match(table.stdout, /key\.create/);
    assert.doesNotMatch(table.stdout, /config\.reload/);

    const json = await cli(serve.url, 'audit', 'list', '--actor', 'admin-token', '--since', '1h', '--limit', '1', '--json');
    assert.equal(json.code, 0, json.stderr);
    const page = JSON.parse(json.stdout);
    assert.deepEqual(page.data.map((entry: { action: string }) => entry.action), ['key.pause']);
    assert.equal(page.has_more, true);

    const refused = await cli(serve.url, 'audit', '--since', 'yesterday');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /since/);
  });

  test('audit export: JSON lines by default, CSV with --format csv', async () => {
    const jsonl = await cli(serve.url, 'audit', 'export', '--target', keyId);
    assert.equal(jsonl.code, 0, jsonl.stderr);
    assert.deepEqual(jsonl.stdout.trim().split('\n').map((line) => JSON.parse(line).action), ['key.pause', 'key.create']);
    const csv = await cli(serve.url, 'audit', 'export', '--format', 'csv', '--target-type', 'config');
    assert.equal(csv.code, 0, csv.stderr);
    const rows = csv.stdout.trim().split('\r\n');
    assert.equal(rows.length, 2);
    assert.match(rows[1]!, /,system,system,,config\.reload,config,/);
  });
});
