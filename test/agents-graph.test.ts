import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validateGraph, describeIssues } from '../src/agents/graph/validate.js';
import type { GraphIssue } from '../src/agents/graph/types.js';
import { graphEnvironment, simpleGraph } from './helpers/agents.js';

type Node = Record<string, unknown>;

function graphWith(nodes: Node[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { version: 1, name: 't', entry: 'input', nodes, ...extra };
}

const input = (next = 'out'): Node => ({ id: 'input', type: 'input', next });
const output = (text = '{{input}}'): Node => ({ id: 'out', type: 'output', config: { text } });

const VALID: [string, unknown, { allowlist?: string[] }?][] = [
  ['input → llm → output', simpleGraph()],
  ['input straight to output', graphWith([input(), output()])],
  ['canvas data and edges are accepted', graphWith([{ ...input(), x: 10, y: 20 }, { ...output(), x: 200, y: 20 }], { edges: [{ from: 'input', to: 'out' }] })],
  ['structured outputs read by a condition', graphWith([
    input('check'),
    { id: 'check', type: 'llm', config: { model: 'text-chat', outputs: [{ name: 'ok', type: 'boolean', description: 'is it ok' }] }, next: 'branch' },
    { id: 'branch', type: 'condition', config: { field: 'check.json.ok', op: 'truthy' }, branches: { true: 'out', false: 'no' } },
    output('yes {{check.json.ok}}'),
    { id: 'no', type: 'output', config: { text: 'no' } },
  ])],
  ['loop with count and var, transform, image, expr condition', graphWith([
    input('loop'),
    { id: 'loop', type: 'loop', config: { count: 3, var: 'i' }, branches: { continue: 'step', done: 'pic' } },
    { id: 'step', type: 'transform', config: { output: { n: '{{vars.i}}', list: ['{{input}}', 1, true, null] } }, next: 'loop' },
    { id: 'pic', type: 'image', config: { model: 'image-gen', prompt: 'draw {{step.json.n}}', size: '1024x1024', n: 2 }, next: 'gate' },
    { id: 'gate', type: 'condition', config: { expr: 'vars.i >= 2 && (step.json.n == "2" || !pic.url)' }, branches: { true: 'out', false: 'out' } },
    { id: 'out', type: 'output', config: { text: 'done {{vars.limit}}', attachments: ['{{pic.url}}'] } },
  ], { variables: { limit: 3 } })],
  ['nested loops: the inner loop\'s done leads back to the outer loop', graphWith([
    input('outer'),
    { id: 'outer', type: 'loop', config: { count: 2 }, branches: { continue: 'inner', done: 'out' } },
    { id: 'inner', type: 'loop', config: { count: 3 }, branches: { continue: 'step', done: 'outer' } },
    { id: 'step', type: 'transform', config: { output: 'x' }, next: 'inner' },
    output(),
  ])],
  ['while loop', graphWith([
    input('loop'),
    { id: 'loop', type: 'loop', config: { while: 'vars.go' }, branches: { continue: 'loop', done: 'out' } },
    output(),
  ], { variables: { go: false } })],
  ['http node on an allow-listed host', graphWith([
    input('call'),
    { id: 'call', type: 'http', config: { url: 'https://api.example.com/search?q={{input}}', method: 'POST', body: { q: '{{input}}' } }, next: 'out' },
    output('{{call.json.result}} {{call.status}}'),
  ]), { allowlist: ['api.example.com'] }],
];

/** Each case: the graph, then fragments every one of which must appear among the issues (node, field, message). */
const INVALID: [string, unknown, [string | null, string, RegExp][], { allowlist?: string[] }?][] = [
  ['not an object', [], [[null, '(graph)', /JSON object/]]],
  ['wrong version, no name, unknown top-level field', { ...simpleGraph(), version: 2, name: '', extra: 1 }, [
    [null, 'version', /must be 1/], [null, 'name', /required/], [null, 'extra', /not a graph field/]]],
  ['no nodes', graphWith([]), [[null, 'nodes', /non-empty/], [null, 'entry', /not a node/]]],
  ['duplicate ids', graphWith([input(), output(), output()]), [['out', 'id', /more than one node/]]],
  ['entry missing', graphWith([input(), output()], { entry: 'start' }), [[null, 'entry', /"start"/]]],
  ['next to an unknown node', graphWith([input('nowhere'), output()]), [['input', 'next', /"nowhere"/]]],
  ['missing next', graphWith([{ id: 'input', type: 'input' }, output()]), [['input', 'next', /required/]]],
  ['no reachable output', graphWith([
    input('a'),
    { id: 'a', type: 'transform', config: { output: {} }, next: 'a2' },
    { id: 'a2', type: 'transform', config: { output: {} }, next: 'a' },
    output(),
  ]), [[null, 'nodes', /no output node can be reached/], ['a2', 'next/branches', /only repeat through a loop/]]],
  ['a path from a loop\'s done branch back to the loop (its count restarts: never ends)', graphWith([
    input('l'),
    { id: 'l', type: 'loop', config: { count: 2 }, branches: { continue: 'body', done: 'again' } },
    { id: 'body', type: 'transform', config: { output: 'x' }, next: 'l' },
    { id: 'again', type: 'condition', config: { expr: 'input == "more"' }, branches: { true: 'l', false: 'out' } },
    output(),
  ]), [['again', 'next/branches', /cycle l → again → l\) after the done branch of loop "l"/]]],
  ['self loop without a loop node', graphWith([input('a'), { id: 'a', type: 'transform', config: { output: {} }, next: 'a' }, output()]), [['a', 'next', /cycle a → a/]]],
  ['llm without model, unknown model, wrong mode', graphWith([
    input('a'),
    { id: 'a', type: 'llm', config: {}, next: 'b' },
    { id: 'b', type: 'llm', config: { model: 'no-such-model' }, next: 'c' },
    { id: 'c', type: 'llm', config: { model: 'image-gen' }, next: 'd' },
    { id: 'd', type: 'image', config: { model: 'vision-chat', prompt: 'x' }, next: 'out' },
    output(),
  ]), [['a', 'config.model', /required/], ['b', 'config.model', /GET \/v1\/models/], ['c', 'config.model', /image_generation model/], ['d', 'config.model', /chat model/]]],
  ['branch handles that do not fit', graphWith([
    input('c'),
    { id: 'c', type: 'condition', config: { field: 'input', op: 'truthy' }, branches: { yes: 'out', true: 'out' }, next: 'out' },
    { id: 'l', type: 'loop', config: { count: 2 }, branches: { true: 'out' } },
    { id: 'out', type: 'output', config: { text: 'x' }, next: 'c' },
    { id: 't', type: 'transform', config: { output: {} }, branches: { true: 'out' }, next: 'out' },
  ]), [
    ['c', 'branches.yes', /not a handle/], ['c', 'branches.false', /required/], ['c', 'next', /no next/],
    ['l', 'branches.true', /not a handle/], ['l', 'branches.continue', /required/], ['l', 'branches.done', /required/],
    ['out', 'next', /ends the run/], ['t', 'branches', /no branches/]]],
  ['subagent refused', graphWith([input('s'), { id: 's', type: 'subagent', config: {}, next: 'out' }, output()]), [['s', 'type', /not enabled in graph version 1/]]],
  ['unknown type and bad id', graphWith([input(), output(), { id: 'x', type: 'python' }, { id: '1bad', type: 'input' }, { id: 'vars', type: 'input' }]), [
    ['x', 'type', /must be one of/], [null, 'nodes[3].id', /letters, digits/], [null, 'nodes[4].id', /not "vars"/]]],
  ['http refused without an allowlist', graphWith([input('h'), { id: 'h', type: 'http', config: { url: 'https://api.example.com/' }, next: 'out' }, output()]), [
    ['h', 'type', /agents.httpAllowlist/]]],
  ['http host not allow-listed, plain http, templated host, credentials', graphWith([
    input('a'),
    { id: 'a', type: 'http', config: { url: 'https://evil.example.com/x' }, next: 'b' },
    { id: 'b', type: 'http', config: { url: 'http://api.example.com/x' }, next: 'c' },
    { id: 'c', type: 'http', config: { url: 'https://{{input}}/x' }, next: 'd' },
    { id: 'd', type: 'http', config: { url: 'https://user:pw@api.example.com/x' }, next: 'e' },
    { id: 'e', type: 'http', config: { url: 'https://api.example.com:8443/x', method: 'GET', body: { a: 1 } }, next: 'out' },
    output(),
  ]), [
    ['a', 'config.url', /not on the operator's allowlist/], ['b', 'config.url', /https:\/\//], ['c', 'config.url', /placeholders only after the host/],
    ['d', 'config.url', /user name or password/], ['e', 'config.url', /api.example.com:8443 is not on/], ['e', 'config.body', /carries no body/]], { allowlist: ['api.example.com'] }],
  ['templates that do not parse or read unknown things', graphWith([
    input('a'),
    { id: 'a', type: 'llm', config: { model: 'vision-chat', system: 'hi {{input', user: '{{ghost.content}} {{vars.nope}} {{a.json.x}} {{out.url}}' }, next: 'out' },
    { id: 'out', type: 'output', config: { text: '{{a.content.constructor}}', attachments: ['{{a.__proto__}}'] } },
  ]), [
    ['a', 'config.system', /never closed/], ['a', 'config.user', /no node "ghost"/], ['a', 'config.user', /vars.nope/],
    ['a', 'config.user', /declares no outputs/], ['a', 'config.user', /output node offers out.content/], ['out', 'config.attachments[0]', /forbidden name "__proto__"/],
    ['out', 'config.text', /forbidden name "constructor"/]]],
  ['expressions with calls, computed access, this, __proto__', graphWith([
    input('a'),
    { id: 'a', type: 'condition', config: { expr: 'input.constructor.constructor("return process")()' }, branches: { true: 'b', false: 'b' } },
    { id: 'b', type: 'condition', config: { expr: 'input["x"]' }, branches: { true: 'c', false: 'c' } },
    { id: 'c', type: 'condition', config: { expr: 'this.x' }, branches: { true: 'd', false: 'd' } },
    { id: 'd', type: 'condition', config: { expr: 'vars.__proto__' }, branches: { true: 'e', false: 'e' } },
    { id: 'e', type: 'condition', config: { expr: 'input ? 1 : 2' }, branches: { true: 'f', false: 'f' } },
    { id: 'f', type: 'loop', config: { while: `${'!'.repeat(40)}input` }, branches: { continue: 'g', done: 'g' } },
    { id: 'g', type: 'condition', config: { expr: 'x'.repeat(1001) }, branches: { true: 'h', false: 'h' } },
    { id: 'h', type: 'condition', config: { expr: '1 % 2 | 3' }, branches: { true: 'out', false: 'out' } },
    output(),
  ]), [
    ['a', 'config.expr', /function calls are not allowed/], ['b', 'config.expr', /computed member access/], ['c', 'config.expr', /"this" is not allowed/],
    ['d', 'config.expr', /forbidden name "__proto__"/], ['e', 'config.expr', /ConditionalExpression is not allowed/],
    ['f', 'config.while', /deeper than 32/], ['g', 'config.expr', /longer than 1000/], ['h', 'config.expr', /operator "%" is not allowed|operator "\|" is not allowed/]]],
  ['condition and loop config mistakes', graphWith([
    input('a'),
    { id: 'a', type: 'condition', config: { field: 'input', op: 'like' }, branches: { true: 'b', false: 'b' } },
    { id: 'b', type: 'condition', config: { field: 'input', op: '==' }, branches: { true: 'c', false: 'c' } },
    { id: 'c', type: 'loop', config: { count: 1000 }, branches: { continue: 'd', done: 'd' } },
    { id: 'd', type: 'loop', config: { count: 2, while: 'true', var: '1x' }, branches: { continue: 'out', done: 'out' } },
    output(),
  ]), [
    ['a', 'config.op', /must be one of/], ['b', 'config.value', /required with op "=="/], ['c', 'config.count', /from 1 to 50/],
    ['d', 'config', /exactly one of count or while/], ['d', 'config.var', /variable name/]]],
  ['llm outputs and unknown settings', graphWith([
    input('a'),
    { id: 'a', type: 'llm', config: { model: 'vision-chat', colour: 'red', temperature: 5, outputs: [{ name: 'x', type: 'date' }, { name: 'constructor', type: 'string' }, { name: 'y', type: 'string' }, { name: 'y', type: 'string' }] }, next: 'out' },
    output(),
  ]), [
    ['a', 'config.colour', /not a known setting/], ['a', 'config.temperature', /0 to 2/], ['a', 'config.outputs[0].type', /must be one of/],
    ['a', 'config.outputs[1].name', /must be a name/], ['a', 'config.outputs[3].name', /declared twice/]]],
  ['output and image requirements', graphWith([
    input('p'),
    { id: 'p', type: 'image', config: { model: 'image-gen', size: 'big', n: 20 }, next: 'out' },
    { id: 'out', type: 'output', config: { attachments: 'x' } },
  ]), [['p', 'config.prompt', /required/], ['p', 'config.size', /1024x1024/], ['p', 'config.n', /1 to 10/], ['out', 'config.text', /required/], ['out', 'config.attachments', /list/]]],
];

function hasIssue(issues: GraphIssue[], [node, field, message]: [string | null, string, RegExp]): boolean {
  return issues.some((issue) => issue.node === node && issue.field === field && message.test(issue.message));
}

describe('agent graph validation', () => {
  for (const [name, graph, options] of VALID) {
    test(`valid: ${name}`, () => {
      const result = validateGraph(graph, graphEnvironment(options));
      assert.equal(result.ok, true, result.ok ? '' : describeIssues(result.issues));
    });
  }
  for (const [name, graph, expected, options] of INVALID) {
    test(`invalid: ${name}`, () => {
      const result = validateGraph(graph, graphEnvironment(options));
      assert.equal(result.ok, false);
      if (result.ok) return;
      for (const issue of expected) {
        assert.ok(hasIssue(result.issues, issue), `missing issue ${JSON.stringify([issue[0], issue[1], String(issue[2])])}\n got: ${describeIssues(result.issues)}`);
      }
    });
  }

  test('the compiled graph keeps the authored JSON in null-prototype objects', () => {
    const result = validateGraph(JSON.parse('{"version":1,"name":"p","entry":"input","variables":{"a":{"__proto__":{"polluted":true}}},"nodes":[{"id":"input","type":"input","next":"out"},{"id":"out","type":"output","config":{"text":"x"}}]}'), graphEnvironment());
    assert.equal(result.ok, true);
    if (!result.ok) return;
    assert.equal(Object.getPrototypeOf(result.graph.variables), null);
    assert.equal(Object.getPrototypeOf(result.graph.variables.a), null);
    assert.equal(Object.hasOwn(result.graph.variables.a as object, '__proto__'), false);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
