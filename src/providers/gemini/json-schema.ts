import { invalidBody } from '../../errors/index.js';
import type { GeminiSchema } from './wire.js';

/**
 * Converts a JSON Schema (OpenAI `response_format.json_schema.schema`, tool `parameters`) to
 * Gemini's OpenAPI-subset Schema: local `$ref`s inlined, `type: [x, "null"]` and null branches
 * turned into `nullable`, `oneOf` read as `anyOf`, `const` as a one-value `enum`, and keywords
 * Gemini rejects (additionalProperties, $schema, patternProperties, …) dropped. Gemini's
 * `enum` holds strings only: a `null` value becomes `nullable`, and an enum (or const) of
 * numbers or booleans moves into the description, keeping the value's type.
 */

type JsonSchema = Record<string, unknown>;

/** Keywords Gemini's Schema accepts as they are. */
const KEPT_KEYWORDS = [
  'title',
  'description',
  'default',
  'example',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'minProperties',
  'maxProperties',
  'propertyOrdering',
] as const;

/** Formats Gemini accepts, per type; others are dropped (the description still carries intent). */
const KEPT_FORMATS: Record<string, readonly string[]> = {
  STRING: ['enum', 'date-time'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

class SchemaConverter {
  private readonly expanding = new Set<string>();

  constructor(
    private readonly root: JsonSchema,
    private readonly param: string,
  ) {}

  convert(node: unknown): GeminiSchema {
    if (node === true || (isObject(node) && Object.keys(node).length === 0)) return {};
    if (!isObject(node)) throw invalidBody(`${this.param} is not a valid JSON Schema (a schema must be an object).`, this.param);
    if (typeof node.$ref === 'string') return this.convertReference(node);

    const result: GeminiSchema = {};
    for (const keyword of KEPT_KEYWORDS) if (node[keyword] !== undefined) (result as Record<string, unknown>)[keyword] = node[keyword];

    const types = (Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type]).map(String);
    const nonNull = types.filter((type) => type !== 'null');
    if (types.includes('null')) result.nullable = true;
    if (nonNull.length === 1) result.type = nonNull[0]!.toUpperCase();
    if (nonNull.length > 1) result.anyOf = nonNull.map((type) => ({ type: type.toUpperCase() }));
    if (node.const !== undefined) addAllowedValues(result, [node.const], 'const');
    else if (Array.isArray(node.enum)) addAllowedValues(result, node.enum, 'enum');

    const format = node.format;
    if (typeof format === 'string' && result.type !== undefined && KEPT_FORMATS[result.type]?.includes(format)) result.format = format;

    if (isObject(node.properties)) {
      result.properties = Object.fromEntries(Object.entries(node.properties).map(([name, value]) => [name, this.convert(value)]));
      result.type ??= 'OBJECT';
    }
    if (Array.isArray(node.required)) result.required = node.required.filter((name): name is string => typeof name === 'string');
    if (node.items !== undefined) result.items = this.convert(Array.isArray(node.items) ? node.items[0] : node.items);

    const branches = [node.anyOf, node.oneOf].find(Array.isArray);
    if (branches !== undefined) this.addBranches(result, branches);
    if (Array.isArray(node.allOf)) this.mergeAll(result, node.allOf);
    // Gemini refuses an OBJECT without properties (a map: additionalProperties only). Left untyped,
    // the schema still takes any object, which is what the caller's schema allowed.
    if (result.type === 'OBJECT' && (result.properties === undefined || Object.keys(result.properties).length === 0)) {
      delete result.type;
      delete result.properties;
    }
    return result;
  }

  /** anyOf/oneOf: a `{"type": "null"}` branch becomes `nullable`; a single branch left is inlined. */
  private addBranches(result: GeminiSchema, branches: unknown[]): void {
    const nonNull = branches.filter((branch) => !(isObject(branch) && branch.type === 'null')).map((branch) => this.convert(branch));
    if (nonNull.length < branches.length) result.nullable = true;
    if (nonNull.length === 1) Object.assign(result, { ...nonNull[0], ...withoutUndefined({ description: result.description, nullable: result.nullable }) });
    else if (nonNull.length > 1) result.anyOf = nonNull;
  }

  /** allOf: Gemini has no intersection, so the members' properties and constraints are merged. */
  private mergeAll(result: GeminiSchema, members: unknown[]): void {
    for (const member of members.map((schema) => this.convert(schema))) {
      const { properties, required, ...rest } = member;
      Object.assign(result, { ...rest, ...withoutUndefined({ description: result.description }) });
      if (properties !== undefined) result.properties = { ...result.properties, ...properties };
      if (required !== undefined) result.required = [...new Set([...(result.required ?? []), ...required])];
    }
  }

  private convertReference(node: JsonSchema): GeminiSchema {
    const reference = node.$ref as string;
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(reference);
    const target = match === null ? undefined : (this.root[match[1]!] as JsonSchema | undefined)?.[decodeURIComponent(match[2]!)];
    if (target === undefined) {
      throw invalidBody(`${this.param}: the $ref "${reference}" does not point into the schema's $defs; only local definitions are supported.`, this.param);
    }
    if (this.expanding.has(reference)) {
      throw invalidBody(`${this.param}: recursive schemas ($ref "${reference}") cannot be sent to this model's provider; unroll the recursion.`, this.param);
    }
    this.expanding.add(reference);
    const { $ref: _reference, ...siblings } = node;
    const resolved = { ...this.convert(target), ...this.convertSiblings(siblings) };
    this.expanding.delete(reference);
    return resolved;
  }

  /** Keywords next to a `$ref` (usually a description) refine the referenced schema. */
  private convertSiblings(siblings: JsonSchema): GeminiSchema {
    return Object.keys(siblings).length === 0 ? {} : this.convert(siblings);
  }
}

/**
 * An `enum` or `const` in Gemini's terms. Its `enum` is a list of strings (Google's parser
 * refuses any other value, and with it the whole request): `null` makes the schema nullable,
 * strings stay an enum, and numbers or booleans, which an enum cannot carry without changing
 * the type of the argument, are listed in the description instead.
 */
function addAllowedValues(result: GeminiSchema, values: unknown[], keyword: 'enum' | 'const'): void {
  const allowed = values.filter((value) => value !== null);
  if (allowed.length < values.length) result.nullable = true;
  if (allowed.length === 0) return;
  if (allowed.every((value) => typeof value === 'string')) {
    result.enum = allowed;
    result.type ??= 'STRING';
    return;
  }
  result.type ??= typeOfValues(allowed);
  const listed = allowed.map((value) => JSON.stringify(value)).join(', ');
  const sentence = keyword === 'const' ? `Always ${listed}.` : `One of: ${listed}.`;
  result.description = result.description === undefined ? sentence : `${result.description} (${sentence.charAt(0).toLowerCase()}${sentence.slice(1, -1)})`;
}

function typeOfValues(values: unknown[]): string | undefined {
  if (values.every((value) => typeof value === 'boolean')) return 'BOOLEAN';
  if (values.every((value) => Number.isInteger(value))) return 'INTEGER';
  if (values.every((value) => typeof value === 'number')) return 'NUMBER';
  return undefined;
}

function withoutUndefined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

export function toGeminiSchema(schema: unknown, param: string): GeminiSchema {
  return new SchemaConverter(isObject(schema) ? schema : {}, param).convert(schema);
}
