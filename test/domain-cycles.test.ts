import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CHECK = new URL('../scripts/domain-cycles.mjs', import.meta.url).pathname;

function check(src?: string) {
  return spawnSync(process.execPath, [CHECK, ...(src === undefined ? [] : [src])], { encoding: 'utf8' });
}

test('the domains of src/ import each other without a cycle, type imports included', () => {
  const result = check();
  assert.equal(result.status, 0, result.stderr);
});

test('a cycle made of type imports alone is found, naming a file of each step', () => {
  const src = mkdtempSync(join(tmpdir(), 'modelgate-cycles-'));
  try {
    for (const domain of ['alpha', 'beta', 'gamma']) mkdirSync(join(src, domain));
    writeFileSync(join(src, 'alpha', 'index.ts'), "import type { B } from '../beta/index.js';\nexport type A = B;\n");
    writeFileSync(join(src, 'beta', 'index.ts'), "export type { A as B } from '../alpha/index.js';\n");
    writeFileSync(join(src, 'gamma', 'index.ts'), "import { a } from '../alpha/index.js';\nexport const g = a;\n");
    const result = check(src);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /alpha → beta \(alpha\/index\.ts\)/);
    assert.match(result.stderr, /beta → alpha \(beta\/index\.ts\)/);
    assert.doesNotMatch(result.stderr, /gamma/);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
});
