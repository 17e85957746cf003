import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, statusOf, type ErrorCode } from '../src/errors/index.js';

const docs = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

/** The table rows of docs/errors.md: `| status | type | \`code\` | …`, code → documented statuses (a code raised on input and on output has two rows). */
function documentedCodes(): Map<string, number[]> {
  const rows = new Map<string, number[]>();
  for (const match of docs.matchAll(/^\| (\d{3}) \| \w+ \| `([a-z_]+)` \|/gm)) rows.set(match[2]!, [...(rows.get(match[2]!) ?? []), Number(match[1])]);
  return rows;
}

test('docs/errors.md documents every error code, with the status the gateway sends', () => {
  const documented = documentedCodes();
  for (const code of ERROR_CODES) {
    assert.ok(documented.has(code), `${code} is missing from docs/errors.md`);
    const statuses = [...new Set([statusOf(code), statusOf(code, { output: true })])];
    assert.deepEqual(documented.get(code), statuses, `docs/errors.md gives ${code} other statuses`);
  }
});

test('docs/errors.md documents no code the gateway does not have', () => {
  const known = new Set<string>(ERROR_CODES);
  for (const code of documentedCodes().keys()) assert.ok(known.has(code as ErrorCode), `docs/errors.md lists ${code}, which is not in src/errors`);
});
