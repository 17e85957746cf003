import type { SafeValue } from '../values.js';

/**
 * The value semantics shared by condition operators and expressions. No implicit coercion
 * beyond one rule: a string compared with a number or boolean is compared with its text form,
 * because model output is text ("3" == 3, "true" == true).
 */
export class OperatorError extends Error {
  override name = 'OperatorError';
}

type Value = SafeValue | undefined;

function describe(value: Value): string {
  if (value === undefined || value === null) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `the ${typeof value} ${JSON.stringify(value).slice(0, 40)}`;
}

export function isTruthy(value: Value): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

export function valuesEqual(left: Value, right: Value): boolean {
  const a = left ?? null;
  const b = right ?? null;
  if (typeof a === 'string' && (typeof b === 'number' || typeof b === 'boolean')) return a.trim() === String(b);
  if (typeof b === 'string' && (typeof a === 'number' || typeof a === 'boolean')) return b.trim() === String(a);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

function asNumber(value: Value): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

/** Orders two numbers, or two strings; a numeric string counts as a number next to a number. */
export function compareValues(left: Value, right: Value): number {
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  const a = asNumber(left);
  const b = asNumber(right);
  if (a === undefined || b === undefined) throw new OperatorError(`cannot order ${describe(left)} and ${describe(right)}`);
  return a - b;
}

export function containsValue(container: Value, item: Value): boolean {
  if (typeof container === 'string') return typeof item === 'string' || typeof item === 'number' ? container.includes(String(item)) : false;
  if (Array.isArray(container)) return container.some((element) => valuesEqual(element, item));
  return false;
}

export function arithmetic(operator: '+' | '-' | '*' | '/', left: Value, right: Value): SafeValue {
  if (operator === '+' && (typeof left === 'string' || typeof right === 'string')) {
    const text = (value: Value) => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));
    return text(left) + text(right);
  }
  if (typeof left !== 'number' || typeof right !== 'number') {
    throw new OperatorError(`"${operator}" needs two numbers, got ${describe(left)} and ${describe(right)}`);
  }
  const result = operator === '+' ? left + right : operator === '-' ? left - right : operator === '*' ? left * right : left / right;
  if (!Number.isFinite(result)) throw new OperatorError(`"${operator}" produced a number that is not finite`);
  return result;
}

export const COMPARISONS = ['==', '!=', '>', '<', '>=', '<='] as const;
export type Comparison = (typeof COMPARISONS)[number];

export function compare(operator: Comparison, left: Value, right: Value): boolean {
  switch (operator) {
    case '==':
      return valuesEqual(left, right);
    case '!=':
      return !valuesEqual(left, right);
    case '>':
      return compareValues(left, right) > 0;
    case '<':
      return compareValues(left, right) < 0;
    case '>=':
      return compareValues(left, right) >= 0;
    case '<=':
      return compareValues(left, right) <= 0;
  }
}
