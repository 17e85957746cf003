// Runs every test file under test/ with Node's own test runner, TypeScript loaded by tsx.
// Node 20's --test does not expand globs itself, so the file list is built here.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return collect(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const filter = process.argv.slice(2);
const files = collect('test').filter((file) => filter.length === 0 || filter.some((f) => file.includes(f))).sort();
// The coding-agent tests' CLIs are installed (on first use) before any test file runs, outside their time limit.
if (files.some((file) => file.startsWith(join('test', 'clients')))) {
  const install = spawnSync(process.execPath, ['--import', 'tsx', join('test', 'clients', 'harness', 'install-clients.ts')], { stdio: 'inherit' });
  if (install.status !== 0) process.exit(install.status ?? 1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
