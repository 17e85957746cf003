import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * scripts/prepare.mjs, the `prepare` script `npm install` runs, in a checkout of its own whose
 * `build` script only counts its runs and writes the two outputs: the first install builds,
 * a second with the same sources does not, and a changed source, a missing output or
 * MODELGATE_REBUILD=1 builds again.
 */

let checkout: string;
const builds = () => (existsSync(join(checkout, 'builds.txt')) ? readFileSync(join(checkout, 'builds.txt'), 'utf8').length : 0);

function prepare(env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const environment = { ...process.env, ...env };
  delete environment.npm_command;
  if (env.MODELGATE_REBUILD === undefined) delete environment.MODELGATE_REBUILD;
  return new Promise((done) => {
    execFile(process.execPath, ['scripts/prepare.mjs'], { cwd: checkout, env: environment }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

const FAKE_BUILD = [
  "const fs = require('node:fs');",
  "fs.appendFileSync('builds.txt', 'x');",
  "fs.mkdirSync('dist/cli', { recursive: true }); fs.mkdirSync('dist/web', { recursive: true });",
  "fs.writeFileSync('dist/cli/main.js', ''); fs.writeFileSync('dist/web/index.html', '');",
].join(' ');

describe('npm install builds dist/ only when its sources changed', () => {
  before(() => {
    checkout = mkdtempSync(join(tmpdir(), 'modelgate-prepare-'));
    mkdirSync(join(checkout, 'scripts'));
    copyFileSync(resolve('scripts/prepare.mjs'), join(checkout, 'scripts/prepare.mjs'));
    writeFileSync(join(checkout, 'package.json'), JSON.stringify({ name: 'prepare-check', private: true, type: 'module', scripts: { build: `node -e "${FAKE_BUILD}"` } }));
    // What prepare looks for to tell a development install from a production one.
    mkdirSync(join(checkout, 'node_modules/typescript'), { recursive: true });
    writeFileSync(join(checkout, 'node_modules/typescript/package.json'), JSON.stringify({ name: 'typescript', main: 'index.js' }));
    writeFileSync(join(checkout, 'node_modules/typescript/index.js'), '');
    mkdirSync(join(checkout, 'src/cli'), { recursive: true });
    writeFileSync(join(checkout, 'src/cli/main.ts'), 'export {};\n');
    mkdirSync(join(checkout, 'web/src'), { recursive: true });
    writeFileSync(join(checkout, 'web/src/App.tsx'), 'export const App = 1;\n');
  });
  after(() => rmSync(checkout, { recursive: true, force: true }));

  test('the first install builds; a second with the same sources skips the build', async () => {
    const first = await prepare();
    assert.equal(first.code, 0, first.stderr);
    assert.equal(builds(), 1);
    assert.match(readFileSync(join(checkout, 'dist/.inputs-sha256'), 'utf8'), /^[0-9a-f]{64}\n$/);
    const second = await prepare();
    assert.equal(second.code, 0, second.stderr);
    assert.equal(builds(), 1, 'not built again');
    assert.match(second.stdout, /dist\/ is up to date with the sources; not rebuilt/);
  });

  test('a changed server or dashboard source builds again, once', async () => {
    writeFileSync(join(checkout, 'src/cli/main.ts'), 'export const changed = true;\n');
    await prepare();
    assert.equal(builds(), 2);
    writeFileSync(join(checkout, 'web/src/Page.tsx'), 'export const Page = 2;\n');
    await prepare();
    assert.equal(builds(), 3);
    await prepare();
    assert.equal(builds(), 3);
  });

  test('a missing output or MODELGATE_REBUILD=1 builds again; a failed build leaves no record', async () => {
    rmSync(join(checkout, 'dist/web'), { recursive: true });
    await prepare();
    assert.equal(builds(), 4);
    await prepare({ MODELGATE_REBUILD: '1' });
    assert.equal(builds(), 5);

    const manifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8'));
    writeFileSync(join(checkout, 'package.json'), JSON.stringify({ ...manifest, scripts: { build: 'node -e "process.exit(3)"' } }));
    const failed = await prepare();
    assert.notEqual(failed.code, 0);
    assert.equal(existsSync(join(checkout, 'dist/.inputs-sha256')), false, 'no record of a build that failed');
  });
});
