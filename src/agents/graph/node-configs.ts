import type { Catalog } from '../../catalog/index.js';
import { isGatewayError } from '../../errors/index.js';
import type { HostAllowlist } from '../http/allowlist.js';
import type { Template } from '../templates/template.js';
import { isForbiddenKey, toSafeValue, ValueError } from '../values.js';
import type { NodeChecker } from './checker.js';
import { isAllowedToolEntry } from '../../mcp/index.js';
import { configKeys } from './node-schema.js';
import {
  CONDITION_OPERATORS,
  HTTP_METHODS,
  OUTPUT_FIELD_TYPES,
  type ConditionOperator,
  type ConditionTest,
  type GraphNode,
  type HttpNode,
  type OutputField,
} from './types.js';

/** What validation needs from the running gateway. */
export interface GraphEnvironment {
  readonly catalog: Pick<Catalog, 'resolve'>;
  readonly httpAllowlist: HostAllowlist;
  readonly maxLoopIterations: number;
  readonly maxValueBytes: number;
}

/** The links of a node as authored, checked by the caller (validate.ts). */
export interface NodeLinks {
  next: string | null;
  branches: Record<string, string> | null;
}

type Config = Record<string, unknown>;
type Compile = (check: NodeChecker, config: Config, links: NodeLinks, environment: GraphEnvironment) => GraphNode | null;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_OUTPUT_FIELDS = 32;
const MAX_IMAGES = 10;

function model(check: NodeChecker, value: unknown, mode: 'chat' | 'image_generation', environment: GraphEnvironment): string | null {
  const id = check.string('config.model', value, true);
  if (id === null) return null;
  try {
    environment.catalog.resolve(id, { mode, param: 'config.model' });
    return id;
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    check.issue('config.model', error.message);
    return null;
  }
}

const MAX_TOOLS = 64;

/** An llm node's gateway MCP tools: `server__tool` or `server__*` names (which servers exist is checked when the node runs). */
function tools(check: NodeChecker, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_TOOLS || !value.every((entry) => typeof entry === 'string' && isAllowedToolEntry(entry))) {
    check.issue('config.tools', `must be a list of at most ${MAX_TOOLS} gateway MCP tool names, each server__tool or server__*`);
    return [];
  }
  return [...new Set(value as string[])];
}

function outputs(check: NodeChecker, value: unknown): OutputField[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_OUTPUT_FIELDS) {
    check.issue('config.outputs', `must be a list of at most ${MAX_OUTPUT_FIELDS} fields`);
    return [];
  }
  const fields: OutputField[] = [];
  const seen = new Set<string>();
  value.forEach((entry: unknown, index) => {
    const field = `config.outputs[${index}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      check.issue(field, 'must be an object with name, type and optional description');
      return;
    }
    const { name, type, description, ...rest } = entry as Config;
    for (const key of Object.keys(rest)) check.issue(`${field}.${key}`, 'is not a known setting (name, type, description)');
    if (typeof name !== 'string' || !IDENTIFIER.test(name) || isForbiddenKey(name)) {
      check.issue(`${field}.name`, 'must be a name of letters, digits and "_" that does not start with a digit');
      return;
    }
    if (seen.has(name)) check.issue(`${field}.name`, `"${name}" is declared twice`);
    seen.add(name);
    if (!(OUTPUT_FIELD_TYPES as readonly unknown[]).includes(type)) {
      check.issue(`${field}.type`, `must be one of ${OUTPUT_FIELD_TYPES.join(', ')}`);
      return;
    }
    if (description !== undefined && typeof description !== 'string') check.issue(`${field}.description`, 'must be a string');
    fields.push({ name, type: type as OutputField['type'], description: typeof description === 'string' ? description : null });
  });
  return fields;
}

function conditionTest(check: NodeChecker, config: Config): ConditionTest | null {
  if (config.expr !== undefined) {
    if (config.field !== undefined || config.op !== undefined || config.value !== undefined) {
      check.issue('config.expr', 'use either expr or field/op/value, not both');
    }
    const expression = check.expression('config.expr', config.expr);
    return expression === null ? null : { kind: 'expression', expression };
  }
  const path = check.path('config.field', config.field);
  const operator = config.op;
  if (!(CONDITION_OPERATORS as readonly unknown[]).includes(operator)) {
    check.issue('config.op', `must be one of ${CONDITION_OPERATORS.join(', ')} (or use config.expr)`);
    return null;
  }
  const unary = operator === 'truthy' || operator === 'falsy';
  if (!unary && config.value === undefined) check.issue('config.value', `is required with op "${String(operator)}"`);
  let value = null;
  try {
    value = config.value === undefined ? null : toSafeValue(config.value);
  } catch (error) {
    if (!(error instanceof ValueError)) throw error;
    check.issue('config.value', `must be JSON: ${error.message}`);
  }
  return path === null ? null : { kind: 'operator', path, operator: operator as ConditionOperator, value };
}

/**
 * The origin of an http URL must be literal (no placeholder before the path), so the host is
 * known — and checked against the allowlist — when the graph is validated.
 */
function httpUrl(check: NodeChecker, value: unknown, environment: GraphEnvironment): Template | null {
  const template = check.template('config.url', value, true);
  if (template === null) return null;
  const first = template.parts[0];
  const literal = first?.kind === 'text' ? first.text : '';
  const hasPlaceholder = template.parts.some((part) => part.kind === 'value');
  const origin = hasPlaceholder ? /^https:\/\/[^/?#]+(?=[/?#])/i.exec(literal)?.[0] : literal;
  let url: URL | undefined;
  try {
    url = origin === undefined ? undefined : new URL(origin);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.protocol !== 'https:') {
    check.issue('config.url', 'must be an https:// URL whose scheme and host are written out (placeholders only after the host)');
    return null;
  }
  if (url.username !== '' || url.password !== '') {
    check.issue('config.url', 'must not carry a user name or password');
    return null;
  }
  if (!environment.httpAllowlist.allows(url)) {
    check.issue('config.url', `host ${url.host} is not on the operator's allowlist (agents.httpAllowlist)`);
    return null;
  }
  return template;
}

const COMPILERS: Record<GraphNode['type'], Compile> = {
  input(check, config, links) {
    check.onlyKnown(config, configKeys('input'));
    return links.next === null ? null : { id: check.node, type: 'input', next: links.next };
  },

  llm(check, config, links, environment) {
    check.onlyKnown(config, configKeys('llm'));
    const id = model(check, config.model, 'chat', environment);
    const system = check.template('config.system', config.system, false);
    const user = check.template('config.user', config.user, false);
    const includeHistory = check.boolean('config.includeHistory', config.includeHistory, true);
    const includeInputMedia = check.boolean('config.includeInputMedia', config.includeInputMedia, true);
    const fields = outputs(check, config.outputs);
    let temperature: number | null = null;
    if (config.temperature !== undefined) {
      if (typeof config.temperature !== 'number' || config.temperature < 0 || config.temperature > 2) {
        check.issue('config.temperature', 'must be a number from 0 to 2');
      } else {
        temperature = config.temperature;
      }
    }
    const maxTokens = check.integer('config.maxTokens', config.maxTokens, 1, 1_000_000);
    if (id === null || links.next === null) return null;
    return { id: check.node, type: 'llm', next: links.next, model: id, system, user, includeHistory, includeInputMedia, outputs: fields, temperature, maxTokens, tools: tools(check, config.tools) };
  },

  condition(check, config, links) {
    check.onlyKnown(config, configKeys('condition'));
    const test = conditionTest(check, config);
    const branches = links.branches;
    if (test === null || branches?.true === undefined || branches.false === undefined) return null;
    return { id: check.node, type: 'condition', test, branches: { true: branches.true, false: branches.false } };
  },

  image(check, config, links, environment) {
    check.onlyKnown(config, configKeys('image'));
    const id = model(check, config.model, 'image_generation', environment);
    const prompt = check.template('config.prompt', config.prompt, true);
    const size = check.string('config.size', config.size, false);
    if (size !== null && !/^\d{2,5}x\d{2,5}$/.test(size)) check.issue('config.size', 'must look like 1024x1024');
    const n = check.integer('config.n', config.n, 1, MAX_IMAGES) ?? 1;
    if (id === null || prompt === null || links.next === null) return null;
    return { id: check.node, type: 'image', next: links.next, model: id, prompt, size, n };
  },

  http(check, config, links, environment) {
    check.onlyKnown(config, configKeys('http'));
    if (!environment.httpAllowlist.enabled) {
      check.issue('type', 'http nodes are disabled on this gateway: the operator has not configured agents.httpAllowlist');
      return null;
    }
    const url = httpUrl(check, config.url, environment);
    const method = config.method ?? 'GET';
    if (!(HTTP_METHODS as readonly unknown[]).includes(method)) check.issue('config.method', `must be one of ${HTTP_METHODS.join(', ')}`);
    const body = config.body === undefined ? null : check.jsonTemplate('config.body', config.body);
    if (body !== null && (method === 'GET' || method === 'DELETE')) check.issue('config.body', `a ${String(method)} request carries no body`);
    if (url === null || links.next === null || !(HTTP_METHODS as readonly unknown[]).includes(method)) return null;
    return { id: check.node, type: 'http', next: links.next, url, method: method as HttpNode['method'], body };
  },

  loop(check, config, links, environment) {
    check.onlyKnown(config, configKeys('loop'));
    const hasCount = config.count !== undefined;
    const hasWhile = config.while !== undefined;
    if (hasCount === hasWhile) check.issue('config', 'set exactly one of count or while');
    const count = hasCount ? check.integer('config.count', config.count, 1, environment.maxLoopIterations) : null;
    const condition = hasWhile ? check.expression('config.while', config.while) : null;
    let variable: string | null = null;
    if (config.var !== undefined) {
      if (typeof config.var !== 'string' || !IDENTIFIER.test(config.var) || isForbiddenKey(config.var)) {
        check.issue('config.var', 'must be a variable name of letters, digits and "_"');
      } else {
        variable = config.var;
      }
    }
    const branches = links.branches;
    if ((count === null && condition === null) || branches?.continue === undefined || branches.done === undefined) return null;
    return { id: check.node, type: 'loop', count, while: condition, variable, branches: { continue: branches.continue, done: branches.done } };
  },

  transform(check, config, links) {
    check.onlyKnown(config, configKeys('transform'));
    if (config.output === undefined) {
      check.issue('config.output', 'is required: the JSON this node produces');
      return null;
    }
    const output = check.jsonTemplate('config.output', config.output);
    return output === null || links.next === null ? null : { id: check.node, type: 'transform', next: links.next, output };
  },

  output(check, config) {
    check.onlyKnown(config, configKeys('output'));
    const text = check.template('config.text', config.text, true);
    let attachments = null;
    if (config.attachments !== undefined) {
      if (!Array.isArray(config.attachments) || config.attachments.length > 50) {
        check.issue('config.attachments', 'must be a list of at most 50 templates such as "{{image_node.url}}"');
      } else {
        attachments = config.attachments.map((entry: unknown, index) => check.template(`config.attachments[${index}]`, entry, true));
      }
    }
    if (text === null || attachments?.some((entry) => entry === null) === true) return null;
    return { id: check.node, type: 'output', text, attachments: attachments as Template[] | null };
  },
};

/** Compiles one node's config, reporting problems through `check`; null when it has any. */
export function compileNode(
  type: GraphNode['type'],
  check: NodeChecker,
  config: Config,
  links: NodeLinks,
  environment: GraphEnvironment,
): GraphNode | null {
  return COMPILERS[type](check, config, links, environment);
}

/** Loop variables a graph declares (readable as vars.<name>). */
export function loopVariables(nodes: Iterable<GraphNode>): string[] {
  const names: string[] = [];
  for (const node of nodes) if (node.type === 'loop' && node.variable !== null) names.push(node.variable);
  return names;
}
