import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { memberEdits, rewriteObjectText } from '../src/json/object-text.js';

/*
 * Top-level members of a JSON object's text changed in place: the result must be what
 * serialising the parsed object with the same changes gives, with every other member kept
 * exactly as written.
 */

const CHUNK_EDITS = memberEdits({ model: 'alias' }, ['usage']);
const rewrite = (text: string) => rewriteObjectText(text, CHUNK_EDITS);

/** The parsed object with the chunk edits applied: what the rewritten text must parse to. */
function expected(text: string): Record<string, unknown> {
  const { usage: _usage, ...rest } = JSON.parse(text) as Record<string, unknown>;
  return { ...rest, model: 'alias' };
}

describe('rewriteObjectText', () => {
  test('changes the model and drops usage; every other member stays as written, in its place', () => {
    const chunk =
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","score":1.50,' +
      '"choices":[{"index":0,"delta":{"content":"caf\\u00e9 \\"model\\":\\"x\\" {[\\\\"},"model":"nested"}],"usage":null}';
    assert.equal(
      rewrite(chunk),
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"alias","score":1.50,' +
        '"choices":[{"index":0,"delta":{"content":"caf\\u00e9 \\"model\\":\\"x\\" {[\\\\"},"model":"nested"}]}',
    );
  });

  test('drops a member wherever it is, with the comma that belongs to it', () => {
    const cases = [
      '{"usage":null,"model":"m","a":1}',
      '{"model":"m","usage":{"total_tokens":3},"a":1}',
      '{"a":[1,{"b":"}"}],"model":"m","usage":null}',
      ' { "usage" : null , "model" : "m" } ',
      '{"usage":null,"model":"m"}',
      '{"model":"m","usage":null}',
    ];
    for (const text of cases) {
      const result = rewrite(text);
      assert.ok(result !== undefined, text);
      assert.deepEqual(JSON.parse(result), expected(text), text);
    }
    const onlyRemoved = rewriteObjectText('{ "usage" : null }', memberEdits({}, ['usage']));
    assert.deepEqual(JSON.parse(onlyRemoved!), {});
    const twoRemovedFirst = rewriteObjectText('{"x":1, "y":2, "z":3}', memberEdits({}, ['x', 'y']));
    assert.deepEqual(JSON.parse(twoRemovedFirst!), { z: 3 });
    const twoRemovedLast = rewriteObjectText('{"x":1, "y":2, "z":3}', memberEdits({}, ['y', 'z']));
    assert.deepEqual(JSON.parse(twoRemovedLast!), { x: 1 });
  });

  test('returns the text itself when nothing changes', () => {
    const text = '{"a":1,"b":[true,false,null]}';
    assert.equal(rewriteObjectText(text, memberEdits({}, ['usage'])), text);
  });

  test('undefined, so the parsed object is serialised instead: a member to set is missing, or an edited member repeats', () => {
    assert.equal(rewrite('{"id":"c1","choices":[{"model":"nested"}]}'), undefined);
    assert.equal(rewrite('{"model":"a","model":"b"}'), undefined);
    assert.equal(rewrite('{"model":"a","usage":null,"usage":null}'), undefined);
    // The same name written with an escape is the same member to JSON.parse.
    assert.equal(rewrite('{"model":"a","mod\\u0065l":"b"}'), undefined);
    assert.equal(rewrite('{"model":"a","\\u0075sage":null}'), '{"model":"alias"}');
  });

  test('undefined for text that is not an object', () => {
    for (const text of ['[{"model":"m"}]', '"model"', '12', 'null', ' [] ']) assert.equal(rewrite(text), undefined, text);
  });

  test('random objects, written with random whitespace and escapes, give what the parsed object gives', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const leaf = () => pick<unknown>([1, -2.5e3, 'text', 'a "quoted" \\ {[}]', '', null, true, false, 'é \u2028']);
    const value = (depth: number): unknown => {
      if (depth > 2 || random() < 0.5) return leaf();
      if (random() < 0.5) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 3) }, () => [pick(['model', 'usage', 'k', 'choices']), value(depth + 1)]));
    };
    for (let round = 0; round < 2_000; round += 1) {
      const members = Array.from({ length: Math.floor(random() * 6) }, () => [pick(['model', 'usage', 'id', 'a', 'b']), value(0)] as const);
      const space = () => pick(['', ' ', '\n', '\t ', '\r\n']);
      const key = (name: string) => (random() < 0.2 ? `"${name.replace(/./, (first) => `\\u${first.charCodeAt(0).toString(16).padStart(4, '0')}`)}"` : JSON.stringify(name));
      const text = `${space()}{${members.map(([name, member]) => `${space()}${key(name)}${space()}:${space()}${JSON.stringify(member, null, pick([0, 1, 2]))}${space()}`).join(',')}}${space()}`;
      const names = members.map(([name]) => name);
      const repeats = (name: string) => names.filter((candidate) => candidate === name).length > 1;
      const result = rewrite(text);
      if (!names.includes('model') || repeats('model') || repeats('usage')) {
        assert.equal(result, undefined, text);
      } else {
        assert.ok(result !== undefined, text);
        assert.deepEqual(JSON.parse(result), expected(text), text);
      }
    }
  });
});
