// The `prepare` lifecycle script, run by `npm install` and `npm ci` in this directory.
// With the dev dependencies (a development checkout, the Dockerfile's build stage) it builds
// dist/: the server (TypeScript) and the dashboard (Vite). A production install
// (`npm ci --omit=dev`) has neither compiler: it runs the dist/ built before, copied in from a
// build stage or shipped in a package made with `npm pack` (docs/deployment.md).
//
// A build takes minutes on a busy machine, so it is skipped when dist/ was built from the
// sources as they are: after each build the SHA-256 of every input (the server's and the
// dashboard's sources, the TypeScript and Vite configs, package.json and package-lock.json)
// is written to dist/.inputs-sha256, and the next install compares. Any change to an input, a
// missing dist/cli/main.js or dist/web/index.html, or MODELGATE_REBUILD=1 builds again.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const INPUT_FOLDERS = ['src', 'web/src', 'web/public'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'web/package.json', 'web/tsconfig.json', 'web/index.html', 'web/vite.config.ts'];
const OUTPUTS = ['dist/cli/main.js', 'dist/web/index.html'];
const RECORD = join(ROOT, 'dist', '.inputs-sha256');

function filesUnder(folder) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) found.push(path);
    }
  };
  if (existsSync(join(ROOT, folder))) walk(join(ROOT, folder));
  return found;
}

/** One SHA-256 over every input's path and bytes, in a fixed order. */
function inputsHash() {
  const paths = [...INPUT_FOLDERS.flatMap(filesUnder), ...INPUT_FILES.map((file) => join(ROOT, file)).filter((path) => existsSync(path))]
    .map((path) => relative(ROOT, path).split('\\').join('/'))
    .sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    const bytes = readFileSync(join(ROOT, path));
    hash.update(`${path}\0${bytes.length}\0`);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

function installed(name) {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}

if (!installed('typescript')) {
  const built = existsSync(new URL('../dist/cli/main.js', import.meta.url));
  process.stdout.write(
    built
      ? 'modelgate: production install; using the built dist/\n'
      : 'modelgate: production install without dist/; copy in the dist/ of a build (npm ci && npm run build) before starting\n',
  );
  process.exit(0);
}
// `npx modelgate` in a checkout installs the checkout into npx's cache as a link, which runs
// this script there: the bin it runs is the checkout's own, so a dist/ already built is used as
// it is. Building again would replace dist/ under a gateway the checkout may be serving.
if (process.env.npm_command === 'exec' && existsSync(new URL('../dist/cli/main.js', import.meta.url))) process.exit(0);
const inputs = inputsHash();
const recorded = existsSync(RECORD) ? readFileSync(RECORD, 'utf8').trim() : null;
if (process.env.MODELGATE_REBUILD !== '1' && recorded === inputs && OUTPUTS.every((output) => existsSync(join(ROOT, output)))) {
  process.stdout.write('modelgate: dist/ is up to date with the sources; not rebuilt (MODELGATE_REBUILD=1 forces a build)\n');
  process.exit(0);
}
// A build cut short must not leave the record of a complete one behind.
rmSync(RECORD, { force: true });
const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
if (result.status === 0) writeFileSync(RECORD, `${inputs}\n`);
process.exit(result.status ?? 1);
