import jsep from 'jsep';
import { checkPath, PathError } from '../paths.js';
import { valueBytes, type PathResolver, type SafeValue } from '../values.js';
import { arithmetic, compare, COMPARISONS, isTruthy, OperatorError, type Comparison } from './operators.js';

/**
 * Expressions of `condition.expr` and `loop.while`. Text is parsed by jsep, then converted
 * into this module's own small AST through a whitelist; only that AST is ever evaluated.
 * There is nothing to call, no computed member access, no `this`, no ternary, no literals
 * but strings, numbers, booleans and null — and no eval, Function or vm anywhere.
 */
export type Expression =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'path'; path: readonly string[] }
  | { kind: 'not'; operand: Expression }
  | { kind: 'negate'; operand: Expression }
  | { kind: 'compare'; operator: Comparison; left: Expression; right: Expression }
  | { kind: 'arithmetic'; operator: '+' | '-' | '*' | '/'; left: Expression; right: Expression }
  | { kind: 'logical'; operator: '&&' | '||'; left: Expression; right: Expression };

export const MAX_EXPRESSION_LENGTH = 1000;
export const MAX_EXPRESSION_DEPTH = 32;

export class ExpressionError extends Error {
  override name = 'ExpressionError';
}

const ALIASES: Readonly<Record<string, Comparison>> = { '===': '==', '!==': '!=' };
const ARITHMETIC = new Set(['+', '-', '*', '/']);

function memberPath(node: jsep.Expression): string[] {
  if (node.type === 'Identifier') return [(node as jsep.Identifier).name];
  if (node.type === 'MemberExpression') {
    const member = node as jsep.MemberExpression;
    if (member.computed) throw new ExpressionError('computed member access (a[b]) is not allowed; use dot paths');
    if (member.optional === true) throw new ExpressionError('optional chaining (?.) is not allowed; a missing value is already null');
    if (member.property.type !== 'Identifier') throw new ExpressionError('a member name must be a plain name');
    return [...memberPath(member.object), (member.property as jsep.Identifier).name];
  }
  if (node.type === 'ThisExpression') throw new ExpressionError('"this" is not allowed');
  if (node.type === 'CallExpression') throw new ExpressionError('function calls are not allowed');
  throw new ExpressionError(`a dot path must start with a name, not ${node.type}`);
}

function convert(node: jsep.Expression, depth: number): Expression {
  if (depth > MAX_EXPRESSION_DEPTH) throw new ExpressionError(`the expression nests deeper than ${MAX_EXPRESSION_DEPTH} levels`);
  switch (node.type) {
    case 'Literal': {
      const value = (node as jsep.Literal).value;
      if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw new ExpressionError('only string, number, boolean and null literals are allowed');
      }
      return { kind: 'literal', value };
    }
    case 'Identifier':
    case 'MemberExpression': {
      const path = memberPath(node);
      try {
        checkPath(path);
      } catch (error) {
        if (error instanceof PathError) throw new ExpressionError(error.message);
        throw error;
      }
      return { kind: 'path', path };
    }
    case 'UnaryExpression': {
      const unary = node as jsep.UnaryExpression;
      const operand = convert(unary.argument, depth + 1);
      if (unary.operator === '!') return { kind: 'not', operand };
      if (unary.operator === '-') return { kind: 'negate', operand };
      throw new ExpressionError(`the operator "${unary.operator}" is not allowed`);
    }
    case 'BinaryExpression': {
      const binary = node as jsep.BinaryExpression;
      const left = convert(binary.left, depth + 1);
      const right = convert(binary.right, depth + 1);
      const operator = ALIASES[binary.operator] ?? binary.operator;
      if (operator === '&&' || operator === '||') return { kind: 'logical', operator, left, right };
      if ((COMPARISONS as readonly string[]).includes(operator)) return { kind: 'compare', operator: operator as Comparison, left, right };
      if (ARITHMETIC.has(operator)) return { kind: 'arithmetic', operator: operator as '+' | '-' | '*' | '/', left, right };
      throw new ExpressionError(`the operator "${binary.operator}" is not allowed`);
    }
    case 'CallExpression':
      throw new ExpressionError('function calls are not allowed');
    case 'ThisExpression':
      throw new ExpressionError('"this" is not allowed');
    case 'Compound':
    case 'SequenceExpression':
      throw new ExpressionError('write one expression (no commas or semicolons)');
    default:
      throw new ExpressionError(`${node.type} is not allowed in an expression`);
  }
}

export function parseExpression(source: string): Expression {
  if (source.trim().length === 0) throw new ExpressionError('the expression is empty');
  if (source.length > MAX_EXPRESSION_LENGTH) throw new ExpressionError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  let tree: jsep.Expression;
  try {
    tree = jsep(source);
  } catch (error) {
    throw new ExpressionError(`it does not parse: ${(error as Error).message}`);
  }
  return convert(tree, 0);
}

/** Every path an expression reads (validation checks they name existing nodes). */
export function expressionPaths(expression: Expression): (readonly string[])[] {
  switch (expression.kind) {
    case 'literal':
      return [];
    case 'path':
      return [expression.path];
    case 'not':
    case 'negate':
      return expressionPaths(expression.operand);
    default:
      return [...expressionPaths(expression.left), ...expressionPaths(expression.right)];
  }
}

export interface EvaluateOptions {
  /** Largest string an expression may build (the run's value budget). */
  maxValueBytes: number;
}

/** Evaluates a converted expression. Failures are ExpressionErrors naming what went wrong. */
export function evaluateExpression(expression: Expression, resolver: PathResolver, options: EvaluateOptions): SafeValue {
  try {
    return evaluate(expression, resolver, options);
  } catch (error) {
    if (error instanceof OperatorError) throw new ExpressionError(error.message);
    throw error;
  }
}

function evaluate(expression: Expression, resolver: PathResolver, options: EvaluateOptions): SafeValue {
  switch (expression.kind) {
    case 'literal':
      return expression.value;
    case 'path':
      return resolver.resolve(expression.path) ?? null;
    case 'not':
      return !isTruthy(evaluate(expression.operand, resolver, options));
    case 'negate': {
      const value = evaluate(expression.operand, resolver, options);
      if (typeof value !== 'number') throw new ExpressionError('"-" needs a number');
      return -value;
    }
    case 'logical': {
      const left = isTruthy(evaluate(expression.left, resolver, options));
      if (expression.operator === '&&') return left && isTruthy(evaluate(expression.right, resolver, options));
      return left || isTruthy(evaluate(expression.right, resolver, options));
    }
    case 'compare':
      return compare(expression.operator, evaluate(expression.left, resolver, options), evaluate(expression.right, resolver, options));
    case 'arithmetic': {
      const result = arithmetic(expression.operator, evaluate(expression.left, resolver, options), evaluate(expression.right, resolver, options));
      if (valueBytes(result, options.maxValueBytes) > options.maxValueBytes) {
        throw new ExpressionError(`the expression built a value larger than ${options.maxValueBytes} bytes`);
      }
      return result;
    }
  }
}
