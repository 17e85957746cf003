import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateExpression, parseExpression, ExpressionError } from '../src/agents/expressions/expression.js';
import { parseTemplate, renderTemplate, renderTemplateValue } from '../src/agents/templates/template.js';
import { parseSafeJson, readPath, toSafeValue, type PathResolver, type SafeValue } from '../src/agents/values.js';

/** A resolver over plain data, the way the runtime's scope resolves: root, then an own-property walk. */
function resolverOf(data: Record<string, SafeValue>): PathResolver {
  const root = toSafeValue(data);
  return { resolve: (path) => readPath(root, path) };
}

const options = { maxValueBytes: 1000 };
const evaluate = (source: string, data: Record<string, SafeValue> = {}) => evaluateExpression(parseExpression(source), resolverOf(data), options);

describe('agent expressions', () => {
  test('operators of the spec', () => {
    const data = { check: { json: { passed: true, score: 7, label: 'ok' } }, vars: { i: 2 }, input: 'hello world' };
    assert.equal(evaluate('check.json.passed == true', data), true);
    assert.equal(evaluate('check.json.score >= 7 && vars.i < 3', data), true);
    assert.equal(evaluate('!check.json.passed || check.json.label != "ok"', data), false);
    assert.equal(evaluate('vars.i * 2 + 1 - 4 / 2', data), 3);
    assert.equal(evaluate('"a" + check.json.label', data), 'aok');
    assert.equal(evaluate('check.json.score == "7"', data), true);
    assert.equal(evaluate('missing.content', data), null);
    assert.equal(evaluate('-vars.i', data), -2);
  });

  test('injection attempts are refused when parsed', () => {
    const attempts: [string, RegExp][] = [
      ['input.constructor.constructor("return process")()', /function calls/],
      ['constructor.constructor', /forbidden name "constructor"/],
      ['input.__proto__.polluted', /forbidden name "__proto__"/],
      ['vars.prototype', /forbidden name "prototype"/],
      ['input["__proto__"]', /computed member access/],
      ['this.constructor', /"this" is not allowed/],
      ['process.exit(1)', /function calls/],
      ['a = 1', /does not parse|not allowed/],
      ['[1, 2]', /ArrayExpression is not allowed/],
      ['a, b', /one expression/],
      ['a?.b', /optional chaining/],
      ['1 ** 2', /operator "\*\*" is not allowed/],
      ['typeof a', /one expression/],
    ];
    for (const [source, message] of attempts) {
      assert.throws(() => parseExpression(source), (error: unknown) => error instanceof ExpressionError && message.test(error.message), source);
    }
  });

  test('dot paths walk only own properties of plain objects', () => {
    const polluted = parseSafeJson('{"a":{"__proto__":{"x":1}},"arr":[1,2],"s":"text"}');
    assert.equal(readPath(polluted, ['a', 'x']), undefined);
    assert.equal(readPath(polluted, ['a', '__proto__']), undefined);
    assert.equal(readPath(polluted, ['arr', '1']), 2);
    assert.equal(readPath(polluted, ['arr', 'length']), undefined);
    assert.equal(readPath(polluted, ['s', 'length']), undefined);
    assert.equal(readPath(polluted, ['a', 'toString']), undefined);
    assert.equal(readPath(polluted, ['a', 'hasOwnProperty']), undefined);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  test('type errors and huge values stop with an ExpressionError', () => {
    assert.throws(() => evaluate('vars.a - "x"', { vars: { a: 1 } }), /needs two numbers/);
    assert.throws(() => evaluate('vars.a / 0', { vars: { a: 1 } }), /not finite/);
    assert.throws(() => evaluate('vars.a < vars.b', { vars: { a: 1, b: 'x' } }), /cannot order/);
    assert.throws(() => evaluate('vars.s + vars.s', { vars: { s: 'x'.repeat(600) } }), /larger than 1000 bytes/);
  });
});

describe('agent templates', () => {
  test('render in one pass: inserted values are never re-parsed', () => {
    const template = parseTemplate('Q: {{input}} / A: {{llm.content}}');
    const text = renderTemplate(template, resolverOf({ input: '{{vars.secret}}', llm: { content: '{{input}}' }, vars: { secret: 'S' } }));
    assert.equal(text, 'Q: {{vars.secret}} / A: {{input}}');
  });

  test('missing values render empty; objects as JSON; a lone placeholder keeps its type', () => {
    const resolver = resolverOf({ t: { json: { a: [1, 2] } } });
    assert.equal(renderTemplate(parseTemplate('[{{nope.content}}]'), resolver), '[]');
    assert.equal(renderTemplate(parseTemplate('{{t.json}}'), resolver), '{"a":[1,2]}');
    assert.deepEqual(renderTemplateValue(parseTemplate('{{ t.json.a }}'), resolver), [1, 2]);
    assert.equal(renderTemplate(parseTemplate('x={{t.json.a}}'), resolver, { encode: encodeURIComponent }), 'x=%5B1%2C2%5D');
  });

  test('placeholders that reach forbidden names do not parse', () => {
    assert.throws(() => parseTemplate('{{input.__proto__}}'), /forbidden name/);
    assert.throws(() => parseTemplate('{{ a.constructor.constructor }}'), /forbidden name/);
    assert.throws(() => parseTemplate('{{ a b }}'), /must start with a node id/);
  });
});
