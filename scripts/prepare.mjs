// The `prepare` lifecycle script, run by `npm install` and `npm ci` in this directory.
// With the dev dependencies (a development checkout, the Dockerfile's build stage) it builds
// dist/: the server (TypeScript) and the dashboard (Vite). A production install
// (`npm ci --omit=dev`) has neither compiler: it runs the dist/ built before, copied in from a
// build stage or shipped in a package made with `npm pack` (docs/deployment.md).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

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
const result = spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);
