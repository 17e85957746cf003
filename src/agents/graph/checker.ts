import { ExpressionError, parseExpression, expressionPaths, type Expression } from '../expressions/expression.js';
import { parsePath, PathError } from '../paths.js';
import { parseTemplate, templatePaths, TemplateError, type Template } from '../templates/template.js';
import { isForbiddenKey, isPlainObject } from '../values.js';
import type { GraphIssue, JsonTemplate } from './types.js';

/** A path read by a template or expression, kept to be checked once every node is known. */
export interface Reference {
  node: string | null;
  field: string;
  path: readonly string[];
}

const MAX_JSON_TEMPLATE_DEPTH = 16;

/**
 * Collects every problem of a graph instead of stopping at the first, and parses the
 * templates and expressions found on the way (remembering what they read).
 */
export class Checker {
  readonly issues: GraphIssue[] = [];
  readonly references: Reference[] = [];

  constructor(readonly maxStringBytes: number) {}

  issue(node: string | null, field: string, message: string): void {
    this.issues.push({ node, field, message });
  }

  /** For one node's config: field names are relative to `config.`. */
  forNode(node: string): NodeChecker {
    return new NodeChecker(this, node);
  }
}

export class NodeChecker {
  constructor(
    private readonly checker: Checker,
    readonly node: string,
  ) {}

  issue(field: string, message: string): void {
    this.checker.issue(this.node, field, message);
  }

  /** Reports config keys outside `known`. */
  onlyKnown(config: Record<string, unknown>, known: readonly string[]): void {
    for (const key of Object.keys(config)) {
      if (!known.includes(key)) this.issue(`config.${key}`, `is not a known setting of this node type (known: ${known.join(', ') || 'none'})`);
    }
  }

  string(field: string, value: unknown, required: boolean): string | null {
    if (value === undefined) {
      if (required) this.issue(field, 'is required');
      return null;
    }
    if (typeof value !== 'string' || value.trim().length === 0) {
      this.issue(field, 'must be a non-empty string');
      return null;
    }
    if (Buffer.byteLength(value) > this.checker.maxStringBytes) {
      this.issue(field, `is longer than ${this.checker.maxStringBytes} bytes`);
      return null;
    }
    return value;
  }

  boolean(field: string, value: unknown, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') this.issue(field, 'must be true or false');
    return value === true;
  }

  integer(field: string, value: unknown, minimum: number, maximum: number): number | null {
    if (value === undefined) return null;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
      this.issue(field, `must be a whole number from ${minimum} to ${maximum}`);
      return null;
    }
    return value;
  }

  template(field: string, value: unknown, required: boolean): Template | null {
    const source = this.string(field, value, required);
    return source === null ? null : this.parseTemplateSource(field, source);
  }

  private parseTemplateSource(field: string, source: string): Template | null {
    try {
      const template = parseTemplate(source);
      for (const path of templatePaths(template)) this.checker.references.push({ node: this.node, field, path });
      return template;
    } catch (error) {
      if (error instanceof TemplateError) {
        this.issue(field, `template does not parse: ${error.message}`);
        return null;
      }
      throw error;
    }
  }

  expression(field: string, value: unknown): Expression | null {
    const source = this.string(field, value, true);
    if (source === null) return null;
    try {
      const expression = parseExpression(source);
      for (const path of expressionPaths(expression)) this.checker.references.push({ node: this.node, field, path });
      return expression;
    } catch (error) {
      if (error instanceof ExpressionError) {
        this.issue(field, `expression is not allowed: ${error.message}`);
        return null;
      }
      throw error;
    }
  }

  path(field: string, value: unknown): string[] | null {
    const source = this.string(field, value, true);
    if (source === null) return null;
    try {
      const path = parsePath(source);
      this.checker.references.push({ node: this.node, field, path });
      return path;
    } catch (error) {
      if (error instanceof PathError) {
        this.issue(field, `is not a valid path: ${error.message}`);
        return null;
      }
      throw error;
    }
  }

  /** JSON whose strings are templates. */
  jsonTemplate(field: string, value: unknown, depth = 0): JsonTemplate | null {
    if (depth > MAX_JSON_TEMPLATE_DEPTH) {
      this.issue(field, `nests deeper than ${MAX_JSON_TEMPLATE_DEPTH} levels`);
      return null;
    }
    if (value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
      return { kind: 'literal', value };
    }
    if (typeof value === 'string') {
      if (Buffer.byteLength(value) > this.checker.maxStringBytes) {
        this.issue(field, `is longer than ${this.checker.maxStringBytes} bytes`);
        return null;
      }
      const template = this.parseTemplateSource(field, value);
      return template === null ? null : { kind: 'template', template };
    }
    if (Array.isArray(value)) {
      const items = value.map((item, index) => this.jsonTemplate(`${field}[${index}]`, item, depth + 1));
      return items.every((item) => item !== null) ? { kind: 'array', items: items as JsonTemplate[] } : null;
    }
    if (isPlainObject(value)) {
      const entries: [string, JsonTemplate][] = [];
      let ok = true;
      for (const key of Object.keys(value)) {
        if (!/^[A-Za-z0-9_-]{1,128}$/.test(key) || isForbiddenKey(key)) {
          this.issue(`${field}.${key.slice(0, 40)}`, 'keys must be 1-128 letters, digits, "_" or "-" and not __proto__, constructor or prototype');
          ok = false;
          continue;
        }
        const compiled = this.jsonTemplate(`${field}.${key}`, value[key], depth + 1);
        if (compiled === null) ok = false;
        else entries.push([key, compiled]);
      }
      return ok ? { kind: 'object', entries } : null;
    }
    this.issue(field, 'must be JSON (object, array, string, number, boolean or null)');
    return null;
  }
}
