import { withArticle } from '../../errors/index.js';
import { isForbiddenKey, isPlainObject, toSafeValue, ValueError, type SafeObject } from '../values.js';
import { Checker, type Reference } from './checker.js';
import { compileNode, loopVariables, type GraphEnvironment, type NodeLinks } from './node-configs.js';
import { branchHandles, NODE_KEYS } from './node-schema.js';
import { checkStructure } from './structure.js';
import { NODE_FIELDS, NODE_TYPES, type CompiledGraph, type GraphIssue, type GraphNode, type NodeType } from './types.js';

export type { GraphEnvironment } from './node-configs.js';

export type ValidationResult = { ok: true; graph: CompiledGraph } | { ok: false; issues: GraphIssue[] };

export const MAX_NODES = 200;
const NODE_ID = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const RESERVED_IDS = new Set(['vars']);
const TOP_LEVEL_KEYS = ['version', 'name', 'entry', 'variables', 'nodes', 'edges'];

function linksOf(checker: Checker, id: string, type: NodeType, raw: Record<string, unknown>): NodeLinks {
  const handles = branchHandles(type);
  let next: string | null = null;
  let branches: Record<string, string> | null = null;
  if (raw.next !== undefined && raw.next !== null) {
    if (handles !== undefined || type === 'output') checker.issue(id, 'next', `${withArticle(type)} node has no next; ${handles ? `use branches ${handles.join(' and ')}` : 'it ends the run'}`);
    else if (typeof raw.next !== 'string') checker.issue(id, 'next', 'must be a node id');
    else next = raw.next;
  } else if (handles === undefined && type !== 'output') {
    checker.issue(id, 'next', 'is required: the id of the node that runs after this one');
  }
  if (raw.branches !== undefined && raw.branches !== null) {
    if (handles === undefined) {
      checker.issue(id, 'branches', `${withArticle(type)} node has no branches${type === 'output' ? '' : '; use next'}`);
    } else if (!isPlainObject(raw.branches)) {
      checker.issue(id, 'branches', `must map ${handles.join(' and ')} to node ids`);
    } else {
      branches = {};
      for (const [handle, target] of Object.entries(raw.branches)) {
        if (!handles.includes(handle)) checker.issue(id, `branches.${handle}`, `is not a handle of ${withArticle(type)} node (handles: ${handles.join(', ')})`);
        else if (typeof target !== 'string') checker.issue(id, `branches.${handle}`, 'must be a node id');
        else branches[handle] = target;
      }
    }
  }
  if (handles !== undefined) {
    for (const handle of handles) {
      if (branches?.[handle] === undefined && !(isPlainObject(raw.branches) && Object.hasOwn(raw.branches, handle))) {
        checker.issue(id, `branches.${handle}`, 'is required');
      }
    }
  }
  return { next, branches };
}

function checkTargets(checker: Checker, id: string, links: NodeLinks, ids: ReadonlySet<string>): void {
  if (links.next !== null && !ids.has(links.next)) checker.issue(id, 'next', `names "${links.next}", which is not a node of this graph`);
  for (const [handle, target] of Object.entries(links.branches ?? {})) {
    if (!ids.has(target)) checker.issue(id, `branches.${handle}`, `names "${target}", which is not a node of this graph`);
  }
}

/** Checks that every path a template or expression reads names something the graph has. */
function checkReferences(checker: Checker, references: readonly Reference[], nodes: ReadonlyMap<string, GraphNode>, types: ReadonlyMap<string, NodeType>, variables: ReadonlySet<string>): void {
  for (const { node, field, path } of references) {
    const [root, second, third] = path;
    if (root === 'input' && path.length === 1) continue;
    if (root === 'vars') {
      if (second !== undefined && !variables.has(second)) {
        checker.issue(node, field, `reads vars.${second}, which is neither in variables nor a loop var`);
      }
      continue;
    }
    const type = types.get(root!);
    if (type === undefined) {
      checker.issue(node, field, `reads "${path.join('.')}", but there is no node "${root}"${root === 'input' ? ' (use {{input}} for the user message)' : ''}`);
      continue;
    }
    if (type === 'subagent') continue;
    const fields = NODE_FIELDS[type];
    if (second === undefined || !fields.includes(second)) {
      checker.issue(node, field, `reads "${path.join('.')}"; ${withArticle(type)} node offers ${fields.map((name) => `${root}.${name}`).join(', ')}`);
      continue;
    }
    const target = nodes.get(root!);
    if (target?.type === 'llm' && second === 'json') {
      if (target.outputs.length === 0) checker.issue(node, field, `reads ${root}.json, but node "${root}" declares no outputs; use ${root}.content`);
      else if (third !== undefined && !target.outputs.some((output) => output.name === third)) {
        checker.issue(node, field, `reads ${root}.json.${third}, but node "${root}" declares only ${target.outputs.map((output) => output.name).join(', ')}`);
      }
    }
  }
}

/**
 * Validates an authored graph (version 1) and compiles it for the runtime. Every problem is
 * reported at once, each naming its node (null for the graph itself) and field.
 */
export function validateGraph(raw: unknown, environment: GraphEnvironment): ValidationResult {
  const checker = new Checker(environment.maxValueBytes);
  if (!isPlainObject(raw)) return { ok: false, issues: [{ node: null, field: '(graph)', message: 'the graph must be a JSON object' }] };

  for (const key of Object.keys(raw)) {
    if (!TOP_LEVEL_KEYS.includes(key)) checker.issue(null, key, `is not a graph field (fields: ${TOP_LEVEL_KEYS.join(', ')})`);
  }
  if (raw.version !== 1) checker.issue(null, 'version', 'must be 1 (the only graph version)');
  const name = typeof raw.name === 'string' && raw.name.trim().length > 0 && raw.name.length <= 200 ? raw.name : null;
  if (name === null) checker.issue(null, 'name', 'is required: a non-empty string of at most 200 characters');
  let variables: SafeObject = Object.create(null) as SafeObject;
  if (raw.variables !== undefined) {
    if (!isPlainObject(raw.variables)) {
      checker.issue(null, 'variables', 'must be an object of initial values');
    } else {
      for (const key of Object.keys(raw.variables)) {
        if (!NODE_ID.test(key) || isForbiddenKey(key)) checker.issue(null, `variables.${key.slice(0, 40)}`, 'variable names are letters, digits and "_"');
      }
      try {
        variables = toSafeValue(raw.variables) as SafeObject;
      } catch (error) {
        if (!(error instanceof ValueError)) throw error;
        checker.issue(null, 'variables', `must be JSON: ${error.message}`);
      }
    }
  }
  if (raw.edges !== undefined && !Array.isArray(raw.edges)) checker.issue(null, 'edges', 'must be a list (it is visual metadata only)');

  const rawNodes = Array.isArray(raw.nodes) ? raw.nodes : [];
  if (!Array.isArray(raw.nodes) || rawNodes.length === 0) checker.issue(null, 'nodes', 'must be a non-empty list of nodes');
  if (rawNodes.length > MAX_NODES) checker.issue(null, 'nodes', `has ${rawNodes.length} nodes; the limit is ${MAX_NODES}`);

  // First pass: ids and types, so links and references can be checked against all of them.
  const types = new Map<string, NodeType>();
  const entries: { id: string; type: NodeType; raw: Record<string, unknown> }[] = [];
  rawNodes.slice(0, MAX_NODES).forEach((node: unknown, index) => {
    if (!isPlainObject(node)) {
      checker.issue(null, `nodes[${index}]`, 'must be an object with id, type and config');
      return;
    }
    const id = typeof node.id === 'string' && NODE_ID.test(node.id) && !RESERVED_IDS.has(node.id) ? node.id : null;
    if (id === null) {
      checker.issue(null, `nodes[${index}].id`, 'must be a name of letters, digits and "_" (not starting with a digit, not "vars")');
      return;
    }
    if (types.has(id)) {
      checker.issue(id, 'id', `"${id}" is used by more than one node; ids must be unique`);
      return;
    }
    if (!(NODE_TYPES as readonly unknown[]).includes(node.type)) {
      checker.issue(id, 'type', `must be one of ${NODE_TYPES.filter((type) => type !== 'subagent').join(', ')}`);
      return;
    }
    types.set(id, node.type as NodeType);
    entries.push({ id, type: node.type as NodeType, raw: node });
  });

  const ids = new Set(types.keys());
  const nodes = new Map<string, GraphNode>();
  for (const { id, type, raw: node } of entries) {
    for (const key of Object.keys(node)) {
      if (!(NODE_KEYS as readonly string[]).includes(key)) checker.issue(id, key, `is not a node field (fields: ${NODE_KEYS.join(', ')})`);
    }
    for (const axis of ['x', 'y'] as const) {
      if (node[axis] !== undefined && typeof node[axis] !== 'number') checker.issue(id, axis, 'must be a number (canvas position)');
    }
    if (type === 'subagent') {
      checker.issue(id, 'type', 'subagent nodes are reserved and not enabled in graph version 1');
      continue;
    }
    const links = linksOf(checker, id, type, node);
    checkTargets(checker, id, links, ids);
    const config = node.config ?? {};
    if (!isPlainObject(config)) {
      checker.issue(id, 'config', 'must be an object');
      continue;
    }
    const compiled = compileNode(type, checker.forNode(id), config, links, environment);
    if (compiled !== null) nodes.set(id, compiled);
  }

  if (typeof raw.entry !== 'string' || raw.entry.length === 0) checker.issue(null, 'entry', 'is required: the id of the first node (usually "input")');
  else if (!ids.has(raw.entry)) checker.issue(null, 'entry', `names "${raw.entry}", which is not a node of this graph`);

  const variableNames = new Set([...Object.keys(variables), ...loopVariables(nodes.values())]);
  checkReferences(checker, checker.references, nodes, types, variableNames);
  if (typeof raw.entry === 'string' && ids.has(raw.entry)) checkStructure(checker, raw.entry, entries, types);

  if (checker.issues.length > 0 || name === null) return { ok: false, issues: checker.issues };
  const source = toSafeValue(raw) as SafeObject;
  return { ok: true, graph: { version: 1, name, entry: raw.entry as string, variables, nodes, source } };
}

/** One line per issue, for error messages and the CLI. */
export function describeIssues(issues: readonly GraphIssue[]): string {
  return issues.map((issue) => `${issue.node === null ? 'graph' : `node "${issue.node}"`} ${issue.field}: ${issue.message}`).join('; ');
}
