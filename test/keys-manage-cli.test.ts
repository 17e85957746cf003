import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminKeysRoutes } from '../src/server/routes/admin-keys.js';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from './helpers/gateway.js';
import { probePath, probeRoutes } from './helpers/probe-routes.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';

/** `modelgate keys` for expiry, rotation, tags and metadata, as an operator runs it against a gateway started here. */

function cli(gateway: TestGateway, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ['bin/modelgate.js', ...args, '--url', gateway.url], { env: { ...process.env, MODELGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN } }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

async function probe(gateway: TestGateway, secret: string): Promise<number> {
  const response = await fetch(`${gateway.url}${probePath('model:request')}`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{}' });
  return response.status;
}

describe('modelgate keys: expiry, rotation, tags, metadata', { skip: CLI_NOT_BUILT }, () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway({ routes: [adminKeysRoutes, probeRoutes] });
  });
  after(async () => {
    await gateway.close();
  });

  test('create with --expires, --tags and --meta; list --tag; update; rotate --grace', async () => {
    const created = await cli(gateway, 'keys', 'create', '--name', 'student-1', '--scopes', 'model:request', '--expires', '30d', '--tags', 'cs101,student', '--meta', 'owner=ada', '--meta', 'seat=12', '--json');
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    const days = (Date.parse(key.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, String(days));
    assert.deepEqual([key.tags, key.metadata], [['cs101', 'student'], { owner: 'ada', seat: '12' }]);
    await cli(gateway, 'keys', 'create', '--name', 'other', '--scopes', 'model:request');

    const listed = await cli(gateway, 'keys', 'list', '--tag', 'student', '--json');
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).data.map((entry: { name: string }) => entry.name), ['student-1']);

    const shown = await cli(gateway, 'keys', 'show', key.id);
    assert.match(shown.stdout, /expires\s+\d{4}-/);
    assert.match(shown.stdout, /tags\s+cs101, student/);
    assert.match(shown.stdout, /meta owner\s+ada/);

    const updated = await cli(gateway, 'keys', 'update', key.id, '--expires', 'none', '--tags', 'none', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual([JSON.parse(updated.stdout).expires_at, JSON.parse(updated.stdout).tags], [null, []]);

    const rotated = await cli(gateway, 'keys', 'rotate', key.id, '--grace', '1h');
    assert.equal(rotated.code, 0, rotated.stderr);
    const secret = /secret\s+(sk-mg-\S+)/.exec(rotated.stdout)?.[1];
    assert.ok(secret !== undefined && secret !== key.secret, rotated.stdout);
    assert.match(rotated.stdout, /previous secret until\s+\d{4}-/);
    assert.match(rotated.stdout, /shown only once/);
    assert.deepEqual([await probe(gateway, secret), await probe(gateway, key.secret)], [200, 200]);

    const now = await cli(gateway, 'keys', 'rotate', key.id, '--json');
    assert.equal(now.code, 0, now.stderr);
    assert.deepEqual([await probe(gateway, secret), await probe(gateway, JSON.parse(now.stdout).secret)], [401, 200]);

    const paused = await cli(gateway, 'keys', 'pause-project', 'default');
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, /^2 keys of default paused: key_/);
    const unconfirmed = await cli(gateway, 'keys', 'revoke-project', 'default');
    assert.notEqual(unconfirmed.code, 0);
    assert.match(unconfirmed.stderr, /--yes/);
    const revoked = await cli(gateway, 'keys', 'revoke-project', 'default', '--yes', '--json');
    assert.equal(JSON.parse(revoked.stdout).data.length, 2);

    const bulk = await cli(gateway, 'keys', 'create', '--count', '3', '--name-prefix', 'seat', '--project', 'exam', '--scopes', 'model:request', '--tags', 'exam');
    assert.equal(bulk.code, 0, bulk.stderr);
    const rows = bulk.stdout.trim().split('\n');
    assert.equal(rows[0], 'id,name,secret');
    assert.deepEqual(rows.slice(1).map((row) => row.split(',')[1]), ['seat-1', 'seat-2', 'seat-3']);
    for (const row of rows.slice(1)) assert.equal(await probe(gateway, row.split(',')[2]!), 200);
    assert.equal(JSON.parse((await cli(gateway, 'keys', 'list', '--tag', 'exam', '--json')).stdout).data.length, 3);
    const noPrefix = await cli(gateway, 'keys', 'create', '--count', '2', '--scopes', 'model:request');
    assert.notEqual(noPrefix.code, 0);
    assert.match(noPrefix.stderr, /--name-prefix/);

    const bad = await cli(gateway, 'keys', 'rotate', key.id, '--grace', 'soon');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /duration such as/);
  });
});
