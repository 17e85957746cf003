import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseObjectInSteps, topLevelMembers, type SteppedParse, type StepBudget } from '../src/json/index.js';

/*
 * The stepped parse of large object bodies must agree with JSON.parse on every text: the same
 * value (key order included) when the text is JSON, a refusal when it is not. Small budgets
 * here so that short texts take many steps.
 */

const tiny: StepBudget = { scanBytesPerStep: 16, parseBytesPerStep: 24 };

function run(text: string, budget = tiny): { result: SteppedParse; steps: number } {
  const steps = parseObjectInSteps(Buffer.from(text), budget);
  for (let count = 0; ; count += 1) {
    const step = steps.next();
    if (step.done === true) return { result: step.value, steps: count };
  }
}

/** The stepped verdict on a text: the parsed value, 'syntax' for a SyntaxError, or the kind. */
function verdict(text: string, budget = tiny): unknown {
  try {
    const { result } = run(text, budget);
    return result.kind === 'parsed' ? result.value : result.kind;
  } catch (error) {
    assert.ok(error instanceof SyntaxError, `only SyntaxError is thrown, not ${String(error)}`);
    return 'syntax';
  }
}

/** Asserts that the stepped parse agrees with JSON.parse on `text`. */
function assertAgrees(text: string, budget = tiny): void {
  let expected: unknown;
  try {
    expected = JSON.parse(text);
  } catch {
    const got = verdict(text, budget);
    assert.ok(got === 'syntax' || got === 'not_laid_out', `${JSON.stringify(text)} is not JSON, yet the stepped parse gave ${JSON.stringify(got)}`);
    return;
  }
  const got = verdict(text, budget);
  if (got === 'not_laid_out') return; // the caller parses it whole
  assert.deepEqual(got, expected, text);
  assert.deepEqual(Object.keys(got as object), Object.keys(expected as object), `key order of ${text}`);
}

/** A small random JSON value (seeded), written with random whitespace. */
function randomJson(next: () => number, depth: number): string {
  const space = () => [' ', '', '\n', '\t ', ''][Math.floor(next() * 5)]!;
  const pick = next();
  if (depth > 3 || pick < 0.35) return [`${Math.floor(next() * 1000) - 500}`, '1.5e3', 'true', 'false', 'null', '"s"', '"a \\"q\\" \\u00e9 ]}"', '""'][Math.floor(next() * 8)]!;
  const count = Math.floor(next() * 5);
  if (pick < 0.65) return `[${space()}${Array.from({ length: count }, () => randomJson(next, depth + 1)).join(`${space()},${space()}`)}${space()}]`;
  const keys = ['a', 'b', 'a', '1', '__proto__', 'k\\u0065y', 'constructor', 'z'];
  return `{${space()}${Array.from({ length: count }, () => `"${keys[Math.floor(next() * keys.length)]}"${space()}:${space()}${randomJson(next, depth + 1)}`).join(`${space()},${space()}`)}${space()}}`;
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('parseObjectInSteps', () => {
  test('agrees with JSON.parse on random objects and on every cut and corruption of them', () => {
    const next = seeded(7);
    const corruptions = [',', ']', '}', '"', ':', ' ', '[', '{', 'x', '\\'];
    let laidOut = 0;
    for (let sample = 0; sample < 300; sample += 1) {
      let text = randomJson(next, 0);
      if (!text.startsWith('{')) text = `{"m":${text},"n":[${text},${text}]}`;
      assertAgrees(text);
      if (verdict(text) !== 'not_laid_out') laidOut += 1;
      for (let cut = 1; cut < text.length; cut += Math.max(1, Math.floor(text.length / 12))) {
        assertAgrees(text.slice(0, cut));
        assertAgrees(text.slice(0, cut) + corruptions[Math.floor(next() * corruptions.length)]! + text.slice(cut));
        assertAgrees(text.slice(0, cut) + text.slice(cut + 1));
      }
    }
    assert.ok(laidOut > 250, `most random objects are parsed in steps (${laidOut} of 300)`);
  });

  test('takes many steps for a large array and agrees with JSON.parse on it', () => {
    const body = JSON.stringify({ model: 'm', messages: Array.from({ length: 500 }, (_, index) => ({ role: 'user', content: `message ${index}` })), n: 2 });
    const { result, steps } = run(body, { scanBytesPerStep: 1024, parseBytesPerStep: 1024 });
    assert.equal(result.kind, 'parsed');
    assert.ok(steps > 20, `${steps} steps`);
    assert.deepEqual(result.kind === 'parsed' && result.value, JSON.parse(body));
  });

  test('keeps a repeated key in its first place with its last value, across steps', () => {
    const text = `{"a":1,"messages":[${'1,'.repeat(40)}1],"b":2,"a":3,"messages":[]}`;
    const value = verdict(text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(value), ['a', 'messages', 'b']);
    assert.equal(value.a, 3);
    assert.deepEqual(value.messages, []);
  });

  test('says a prototype key is there, at the top, inside an element, or escaped', () => {
    const poisoned = (text: string) => {
      const { result } = run(text);
      assert.equal(result.kind, 'parsed', text);
      return result.kind === 'parsed' && result.poisoned;
    };
    const items = `[${'{"x":1},'.repeat(20)}{"x":2}]`;
    assert.equal(poisoned(`{"a":${items}}`), false);
    assert.equal(poisoned(`{"a":${items},"__proto__":{"admin":true}}`), true);
    assert.equal(poisoned(`{"__proto__":${items}}`), true);
    assert.equal(poisoned(`{"a":[${'{"x":1},'.repeat(20)}{"__proto__":1}]}`), true);
    assert.equal(poisoned(`{"a":${items},"c\\u006fnstructor":{"prototype":{}}}`), true);
    assert.equal(poisoned(`{"a":${items},"constructor":{"name":"x"}}`), false);
    const value = verdict(`{"a":${items},"__proto__":{"admin":true}}`) as Record<string, unknown>;
    assert.ok(Object.prototype.hasOwnProperty.call(value, '__proto__'), '__proto__ is an own key, as JSON.parse makes it');
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
  });

  test('finds nesting past the limit in a member or an element, and only past it', () => {
    const nest = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    // The top object is level 1, so a member may nest 127 more and an element of an array member 126.
    assert.equal(run(`{"a":${nest(127)}}`).result.kind, 'parsed');
    assert.equal(run(`{"a":${nest(128)}}`).result.kind, 'too_deep');
    assert.equal(run(`{"a":[1,${nest(126)}]}`).result.kind, 'parsed');
    assert.equal(run(`{"a":[1,${nest(127)}]}`).result.kind, 'too_deep');
    assert.equal(run(`{"a":{"b":${nest(127)}}}`).result.kind, 'too_deep');
    // Brackets inside strings do not count.
    assert.equal(run(`{"a":"${'['.repeat(300)}"}`).result.kind, 'parsed');
  });

  test('leaves texts that are not one object for the whole-body parse', () => {
    for (const text of ['[1,2]', '"s"', '{}', ' {  } ', '{"a":1} x', '{"a":1}{"b":2}', '{"a":}', '{"a":[1,]}', '{"a":1,}', '{"a" 1}', '{"a":"unclosed}']) {
      const got = verdict(text);
      assert.ok(got === 'not_laid_out' || got === 'syntax', `${text}: ${JSON.stringify(got)}`);
    }
  });

  test('refuses glue missing between pieces parsed apart', () => {
    // Each element and member is longer than a step, so each is parsed alone: only the scan sees what is between them.
    const long = `"${'x'.repeat(40)}"`;
    for (const text of [`{"a":[${long} ${long}]}`, `{"a":[${long},,${long}]}`, `{"a":${long} "b":${long}}`, `{"a":[${long}],"b":${long},}`, `{"a":[${long}] "b":1}`]) {
      const got = verdict(text);
      assert.ok(got === 'not_laid_out' || got === 'syntax', `${text}: ${JSON.stringify(got)}`);
    }
  });

  test('keeps long strings as they are, in elements and members alike', () => {
    const image = `data:image/png;base64,${'QUJD'.repeat(20_000)}`;
    const text = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }, { role: 'user', content: 'x' }], note: image });
    assert.deepEqual(verdict(text, { scanBytesPerStep: 1024, parseBytesPerStep: 1024 }), JSON.parse(text));
  });

  test('leaves the members found for topLevelMembers, where a scan of them would find them', () => {
    const text = ` { "model" : "m" , "messages" : [ {"role":"user"} , 2 ] , "s\\u0074ream":true,"model":"n" } `;
    const bytes = Buffer.from(text);
    const steps = parseObjectInSteps(bytes, tiny);
    while (steps.next().done !== true);
    const stepped = topLevelMembers(bytes);
    const scanned = topLevelMembers(Buffer.from(text));
    assert.deepEqual(stepped, scanned);
    assert.deepEqual(
      stepped.map((member) => member.key),
      ['model', 'messages', 'stream', 'model'],
    );
  });
});
