import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VENDOR_MODELS } from './harness/client-bench.js';
import { PINNED_CLIENTS } from './harness/installs.js';

/* docs/clients.md's table of tested coding agents names the versions and models the client tests run. */
test('the tested-clients table of docs/clients.md names each pinned client version and each vendor model', () => {
  const docs = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
  const table = docs.slice(docs.indexOf('## Coding agents, tested'), docs.indexOf('\n## ', docs.indexOf('## Coding agents, tested') + 1));
  assert.ok(table.length > 0, 'docs/clients.md has a "Coding agents, tested" section');
  for (const [name, pinned] of Object.entries(PINNED_CLIENTS)) {
    assert.match(table, new RegExp(`\\| ${name.replace('-', '[ -]')}[^|]* \\| ${pinned.version.replaceAll('.', '\\.')} \\|`, 'i'), `${name} ${pinned.version}`);
  }
  for (const model of Object.values(VENDOR_MODELS)) assert.ok(table.includes(model), model);
});
