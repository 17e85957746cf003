import type { Expression } from '../expressions/expression.js';
import type { Template } from '../templates/template.js';
import type { SafeObject, SafeValue } from '../values.js';

/** Node types of graph version 1 (docs/agents.md, "Graph reference"). `subagent` is reserved and refused. */
export const NODE_TYPES = ['input', 'llm', 'condition', 'image', 'http', 'loop', 'transform', 'output', 'subagent'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** One problem of a graph: which node (null for the graph itself), which field, and what to fix. */
export interface GraphIssue {
  node: string | null;
  field: string;
  message: string;
}

export const CONDITION_OPERATORS = ['==', '!=', '>', '<', '>=', '<=', 'contains', 'truthy', 'falsy'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export const OUTPUT_FIELD_TYPES = ['string', 'boolean', 'number', 'integer'] as const;
export interface OutputField {
  name: string;
  type: (typeof OUTPUT_FIELD_TYPES)[number];
  description: string | null;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** JSON with templates in its strings (transform output, http body), compiled once. */
export type JsonTemplate =
  | { kind: 'literal'; value: number | boolean | null }
  | { kind: 'template'; template: Template }
  | { kind: 'array'; items: JsonTemplate[] }
  | { kind: 'object'; entries: [string, JsonTemplate][] };

export type ConditionTest =
  | { kind: 'expression'; expression: Expression }
  | { kind: 'operator'; path: readonly string[]; operator: ConditionOperator; value: SafeValue };

interface NodeBase {
  readonly id: string;
}

export interface InputNode extends NodeBase {
  type: 'input';
  next: string;
}

export interface LlmNode extends NodeBase {
  type: 'llm';
  next: string;
  model: string;
  system: Template | null;
  user: Template | null;
  includeHistory: boolean;
  includeInputMedia: boolean;
  outputs: OutputField[];
  temperature: number | null;
  maxTokens: number | null;
  /** Gateway MCP tools the model may use (`server__tool`, `server__*`); empty: none (docs/agents.md). */
  tools: string[];
}

export interface ConditionNode extends NodeBase {
  type: 'condition';
  test: ConditionTest;
  branches: { true: string; false: string };
}

export interface ImageNode extends NodeBase {
  type: 'image';
  next: string;
  model: string;
  prompt: Template;
  size: string | null;
  n: number;
}

export interface HttpNode extends NodeBase {
  type: 'http';
  next: string;
  url: Template;
  method: (typeof HTTP_METHODS)[number];
  body: JsonTemplate | null;
}

export interface LoopNode extends NodeBase {
  type: 'loop';
  count: number | null;
  while: Expression | null;
  variable: string | null;
  branches: { continue: string; done: string };
}

export interface TransformNode extends NodeBase {
  type: 'transform';
  next: string;
  output: JsonTemplate;
}

export interface OutputNode extends NodeBase {
  type: 'output';
  text: Template;
  attachments: Template[] | null;
}

export type GraphNode = InputNode | LlmNode | ConditionNode | ImageNode | HttpNode | LoopNode | TransformNode | OutputNode;

/** A validated graph, ready to run. The authored JSON is kept as `source` (what is stored). */
export interface CompiledGraph {
  readonly version: 1;
  readonly name: string;
  readonly entry: string;
  readonly variables: SafeObject;
  readonly nodes: ReadonlyMap<string, GraphNode>;
  readonly source: SafeObject;
}

/** Fields each node type exposes to templates and expressions (`<node>.<field>`). */
export const NODE_FIELDS: { readonly [T in GraphNode['type']]: readonly string[] } = {
  input: ['content'],
  llm: ['content', 'json'],
  condition: ['content', 'json'],
  image: ['content', 'url', 'json'],
  http: ['content', 'json', 'status'],
  loop: ['content', 'json'],
  transform: ['content', 'json'],
  output: ['content'],
};
