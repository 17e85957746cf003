import { CONDITION_OPERATORS, HTTP_METHODS, NODE_FIELDS, OUTPUT_FIELD_TYPES, type GraphNode } from './types.js';

/**
 * The settings of each node type of graph version 1, as data: the validator takes each type's
 * known config keys and branch handles from here, and the admin API serves it
 * (`GET /admin/v1/agent-schema`) so editors build their forms from the same description.
 */

export type ConfigFieldKind =
  /** A catalog model id of `mode`. */
  | 'model'
  /** A template string (`{{ path }}` placeholders). */
  | 'template'
  /** A list of template strings. */
  | 'templates'
  | 'string'
  | 'boolean'
  | 'number'
  | 'integer'
  /** One of `options`. */
  | 'enum'
  /** Structured output fields: `[{name, type, description?}]`. */
  | 'outputs'
  /** JSON whose strings are templates. */
  | 'json'
  /** Any JSON value. */
  | 'value'
  /** A dot path such as `check.json.on_topic`. */
  | 'path'
  /** An expression (docs/agents.md, Templates and expressions). */
  | 'expression'
  /** A variable name. */
  | 'identifier'
  /** Gateway MCP tool names: `server__tool` or `server__*` (an extension of graph version 1). */
  | 'tools';

export interface ConfigFieldSchema {
  name: string;
  kind: ConfigFieldKind;
  required: boolean;
  description: string;
  mode?: 'chat' | 'image_generation';
  options?: readonly string[];
  minimum?: number;
  /** `max_loop_iterations` stands for the gateway's `agents.maxLoopIterations`. */
  maximum?: number | 'max_loop_iterations';
  default?: string | number | boolean;
}

export interface NodeTypeSchema {
  type: GraphNode['type'];
  description: string;
  /** `next` for one follow-up node, the branch handles for condition and loop, none for output. */
  links: { kind: 'next' } | { kind: 'branches'; handles: readonly string[] } | { kind: 'none' };
  /** Fields later templates read as `<node>.<field>`. */
  exposes: readonly string[];
  config: readonly ConfigFieldSchema[];
}

const field = (name: string, kind: ConfigFieldKind, description: string, extra: Partial<ConfigFieldSchema> = {}): ConfigFieldSchema => ({
  name,
  kind,
  required: false,
  description,
  ...extra,
});

const NEXT = { kind: 'next' } as const;

export const NODE_SCHEMAS: readonly NodeTypeSchema[] = [
  { type: 'input', description: "The turn's text and images come in here.", links: NEXT, exposes: NODE_FIELDS.input, config: [] },
  {
    type: 'llm',
    description: 'Calls a chat model.',
    links: NEXT,
    exposes: NODE_FIELDS.llm,
    config: [
      field('model', 'model', 'a chat model of the catalog', { required: true, mode: 'chat' }),
      field('system', 'template', 'system prompt'),
      field('user', 'template', "user message (default: the turn's text)"),
      field('includeHistory', 'boolean', "the conversation's earlier turns", { default: true }),
      field('includeInputMedia', 'boolean', "the turn's images", { default: true }),
      field('outputs', 'outputs', 'structured output fields, read as {{node.json.<name>}}'),
      field('temperature', 'number', 'sampling temperature', { minimum: 0, maximum: 2 }),
      field('maxTokens', 'integer', 'largest answer in tokens', { minimum: 1, maximum: 1_000_000 }),
      field('tools', 'tools', 'gateway MCP tools the model may use: server__tool or server__*'),
    ],
  },
  {
    type: 'condition',
    description: 'Takes the true or the false branch.',
    links: { kind: 'branches', handles: ['true', 'false'] },
    exposes: NODE_FIELDS.condition,
    config: [
      field('field', 'path', 'the value tested, such as check.json.on_topic'),
      field('op', 'enum', 'how it is tested', { options: CONDITION_OPERATORS }),
      field('value', 'value', 'what it is compared with (not for truthy/falsy)'),
      field('expr', 'expression', 'instead of field/op/value: an expression'),
    ],
  },
  {
    type: 'image',
    description: 'Generates images.',
    links: NEXT,
    exposes: NODE_FIELDS.image,
    config: [
      field('model', 'model', 'an image model of the catalog', { required: true, mode: 'image_generation' }),
      field('prompt', 'template', 'what to draw', { required: true }),
      field('size', 'string', 'such as 1024x1024'),
      field('n', 'integer', 'number of images', { minimum: 1, maximum: 10, default: 1 }),
    ],
  },
  {
    type: 'http',
    description: "Calls an https URL on the operator's allowlist.",
    links: NEXT,
    exposes: NODE_FIELDS.http,
    config: [
      field('url', 'template', 'https URL; placeholders only after the host', { required: true }),
      field('method', 'enum', 'HTTP method', { options: HTTP_METHODS, default: 'GET' }),
      field('body', 'json', 'JSON body (POST, PUT, PATCH); strings are templates'),
    ],
  },
  {
    type: 'loop',
    description: 'Repeats its continue branch, then takes done.',
    links: { kind: 'branches', handles: ['continue', 'done'] },
    exposes: NODE_FIELDS.loop,
    config: [
      field('count', 'integer', 'iterations (set count or while)', { minimum: 1, maximum: 'max_loop_iterations' }),
      field('while', 'expression', 'go round while this holds (set count or while)'),
      field('var', 'identifier', 'variable holding the iteration, read as {{vars.<name>}}'),
    ],
  },
  {
    type: 'transform',
    description: 'Builds a JSON value.',
    links: NEXT,
    exposes: NODE_FIELDS.transform,
    config: [field('output', 'json', 'the JSON this node produces; strings are templates', { required: true })],
  },
  {
    type: 'output',
    description: 'Ends the run with the answer.',
    links: { kind: 'none' },
    exposes: NODE_FIELDS.output,
    config: [
      field('text', 'template', 'the answer', { required: true }),
      field('attachments', 'templates', 'images to attach, such as {{paint.url}}'),
    ],
  },
];

/** The fields of a node (validate.ts refuses any other). */
export const NODE_KEYS = ['id', 'type', 'config', 'next', 'branches', 'x', 'y'] as const;

const BY_TYPE = new Map(NODE_SCHEMAS.map((schema) => [schema.type, schema]));

/** The config keys a node type accepts. */
export function configKeys(type: GraphNode['type']): string[] {
  return BY_TYPE.get(type)!.config.map((entry) => entry.name);
}

/** The branch handles of a node type, or undefined when it links with next (or not at all). */
export function branchHandles(type: string): readonly string[] | undefined {
  const links = BY_TYPE.get(type as GraphNode['type'])?.links;
  return links?.kind === 'branches' ? links.handles : undefined;
}

/** `GET /admin/v1/agent-schema`: what an editor needs to build node forms the validator agrees with. */
export interface AgentGraphSchema {
  version: 1;
  node_types: (Omit<NodeTypeSchema, 'config'> & { config: (Omit<ConfigFieldSchema, 'maximum'> & { maximum?: number })[] })[];
  output_field_types: readonly string[];
  /** Fields every node may carry besides config; `x` and `y` are the canvas position. */
  node_keys: readonly string[];
}

export function agentGraphSchema(maxLoopIterations: number): AgentGraphSchema {
  return {
    version: 1,
    node_types: NODE_SCHEMAS.map((schema) => ({
      ...schema,
      config: schema.config.map((entry) => (entry.maximum === 'max_loop_iterations' ? { ...entry, maximum: maxLoopIterations } : (entry as Omit<ConfigFieldSchema, 'maximum'> & { maximum?: number }))),
    })),
    output_field_types: OUTPUT_FIELD_TYPES,
    node_keys: NODE_KEYS,
  };
}
