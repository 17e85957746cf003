import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomHex } from '../src/crypto/index.js';

describe('randomHex', () => {
  test('gives the asked number of bytes as hex, across the pool refills, never the same value twice', () => {
    const seen = new Set<string>();
    // 24 bytes do not divide the 4 KiB pool: the draws run over several refills and a remainder.
    for (let index = 0; index < 2000; index += 1) {
      const value = randomHex(24);
      assert.match(value, /^[0-9a-f]{48}$/);
      seen.add(value);
    }
    assert.equal(seen.size, 2000);
    assert.match(randomHex(10_000), /^[0-9a-f]{20000}$/);
  });
});
