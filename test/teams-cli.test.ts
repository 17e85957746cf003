import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CLI_NOT_BUILT } from './helpers/serve-process.js';
import { adminCli as cli } from './helpers/admin-cli.js';

/**
 * `modelgate teams …`, `projects move`, `usage --by team|tag` and `keys create --csv` as an
 * operator runs them against a gateway.
 */

describe('modelgate teams, projects move, keys create --csv', { skip: CLI_NOT_BUILT }, () => {
  let gateway: TestGateway;
  let dir: string;

  before(async () => {
    gateway = await startTestGateway();
    dir = mkdtempSync(join(tmpdir(), 'modelgate-teams-cli-'));
  });
  after(async () => {
    await gateway?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create, list, rename; a project moved in blocks the delete until moved out', async () => {
    const created = await cli(gateway, 'teams', 'create', 'research', '--name', 'Research');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /Created team research \(Research\)/);
    assert.equal((await gateway.admin('POST', '/admin/v1/projects', { id: 'lab' })).status, 201);
    const moved = await cli(gateway, 'projects', 'move', 'lab', '--team', 'research');
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stdout, /Moved project lab to team research/);
    const list = await cli(gateway, 'teams', 'list', '--json');
    const teams = JSON.parse(list.stdout) as { data: { id: string; projects: { id: string }[] }[] };
    assert.deepEqual(teams.data.map((team) => [team.id, team.projects.map((project) => project.id)]), [['default', ['default']], ['research', ['lab']]]);
    const table = await cli(gateway, 'teams', 'list');
    assert.match(table.stdout, /research\s+Research\s+lab\s+0/);
    const refused = await cli(gateway, 'teams', 'delete', 'research');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /still holds project "lab"/);
    assert.equal((await cli(gateway, 'teams', 'rename', 'research', 'Research lab')).code, 0);
    assert.equal((await cli(gateway, 'projects', 'move', 'lab', '--team', 'default')).code, 0);
    const deleted = await cli(gateway, 'teams', 'delete', 'research');
    assert.equal(deleted.code, 0, deleted.stderr);
    const unknown = await cli(gateway, 'projects', 'move', 'lab', '--team', 'nowhere');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no team "nowhere"/);
  });

  test('keys create --csv: one key a line with its end user in the metadata; the secrets CSV names them', async () => {
    const file = join(dir, 'students.csv');
    writeFileSync(file, 'name,end_user\r\nAda,student-17\r\n"Grace, H.",student-18\r\nNo end user,\r\n');
    const created = await cli(gateway, 'keys', 'create', '--csv', file, '--scopes', 'model:request', '--tags', 'class:101', '--project', 'lab');
    assert.equal(created.code, 0, created.stderr);
    const lines = created.stdout.trim().split('\n');
    assert.equal(lines[0], 'id,name,end_user,secret');
    assert.equal(lines.length, 4);
    assert.match(lines[2]!, /^key_\w+,"Grace, H\.",student-18,sk-mg-\w+$/);
    assert.match(lines[3]!, /,No end user,,sk-mg-/);
    const keys = (await gateway.admin('GET', '/admin/v1/keys?project=lab')).body.data as { name: string; metadata: Record<string, string>; tags: string[] }[];
    const byName = new Map(keys.map((key) => [key.name, key]));
    assert.deepEqual(byName.get('Ada')?.metadata, { endUser: 'student-17' });
    assert.deepEqual(byName.get('Grace, H.')?.tags, ['class:101']);
    assert.deepEqual(byName.get('No end user')?.metadata, {});

    writeFileSync(file, 'Ada,student-17,extra\n');
    const bad = await cli(gateway, 'keys', 'create', '--csv', file, '--scopes', 'model:request');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /line 1 of the CSV has 3 fields/);

    writeFileSync(file, '\uFEFFname,end_user\nAda,"student-17\n');
    const unclosed = await cli(gateway, 'keys', 'create', '--csv', file, '--scopes', 'model:request');
    assert.equal(unclosed.code, 1);
    assert.match(unclosed.stderr, /the CSV cannot be read: .*[Qq]uote/);
  });

  test('usage --by tag and --by team', async () => {
    const byTag = await cli(gateway, 'usage', '--by', 'tag');
    assert.equal(byTag.code, 0, byTag.stderr);
    const byTeam = await cli(gateway, 'usage', '--by', 'team', '--json');
    assert.equal(byTeam.code, 0, byTeam.stderr);
    assert.equal((JSON.parse(byTeam.stdout) as { by: string }).by, 'team');
    const wrong = await cli(gateway, 'usage', '--by', 'colour');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /day, model, key, project, team, agent, tag/);
  });
});
