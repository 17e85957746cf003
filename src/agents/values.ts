/**
 * Values as the agent runtime holds them. Everything a run computes, and every piece of JSON
 * that comes from a model, a user or an http response, is copied into this shape first:
 * objects have a null prototype, so no path or key can ever reach Object.prototype, and the
 * names that could (`__proto__`, `constructor`, `prototype`) are neither kept nor walked.
 */
export type SafeValue = null | boolean | number | string | SafeValue[] | SafeObject;
export interface SafeObject {
  [key: string]: SafeValue;
}

const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 64;

export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

export function emptyObject(): SafeObject {
  return Object.create(null) as SafeObject;
}

/** True for objects made by JSON.parse, object literals or emptyObject() (never class instances). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
}

export class ValueError extends Error {
  override name = 'ValueError';
}

/**
 * Deep copy of JSON-like data into safe values. Forbidden keys are dropped; anything that is
 * not JSON (functions, class instances, non-finite numbers) or nests deeper than 64 is refused.
 */
export function toSafeValue(value: unknown, depth = 0): SafeValue {
  if (depth > MAX_DEPTH) throw new ValueError(`the value nests deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ValueError('the value holds a number that is not finite');
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => toSafeValue(item, depth + 1));
  if (isPlainObject(value)) {
    const copy = emptyObject();
    for (const key of Object.keys(value)) {
      if (!isForbiddenKey(key)) copy[key] = toSafeValue(value[key], depth + 1);
    }
    return copy;
  }
  throw new ValueError(`a value of type ${typeof value} is not a JSON value`);
}

/** Parses JSON text straight into safe values. */
export function parseSafeJson(text: string): SafeValue {
  return toSafeValue(JSON.parse(text) as unknown);
}

/** A value being built (a rendered template) grew past the run's value budget. */
export class ValueSizeError extends Error {
  override name = 'ValueSizeError';
}

const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text), 'utf8');

/**
 * Size of a value as the run budget counts it: UTF-8 bytes of its text or JSON form. Counted
 * by walking the value, never by writing it out, and abandoned as soon as it passes `limit`
 * (the result is then some number above `limit`): a value that shares one big part many times
 * (a transform that repeats a node's JSON) could be far too large to write out at all.
 */
export function valueBytes(value: SafeValue | undefined, limit = Number.POSITIVE_INFINITY): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  let total = 0;
  const add = (item: SafeValue): void => {
    if (total > limit) return;
    if (item === null || typeof item === 'boolean' || typeof item === 'number') total += String(item).length;
    else if (typeof item === 'string') total += jsonBytes(item);
    else if (Array.isArray(item)) {
      total += 2 + Math.max(0, item.length - 1);
      for (const element of item) add(element);
    } else {
      const keys = Object.keys(item);
      total += 2 + Math.max(0, keys.length - 1);
      for (const key of keys) {
        total += jsonBytes(key) + 1;
        add(item[key]!);
      }
    }
  };
  add(value);
  return total;
}

/**
 * Walks a dot path below a value: own properties of plain objects and in-range indices of
 * arrays only. Anything else (strings, prototypes, forbidden names) yields undefined.
 */
export function readPath(root: SafeValue | undefined, segments: readonly string[]): SafeValue | undefined {
  let current: SafeValue | undefined = root;
  for (const segment of segments) {
    if (current === undefined || current === null || isForbiddenKey(segment)) return undefined;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d{0,8})$/.test(segment)) return undefined;
      const index = Number(segment);
      current = index < current.length ? current[index] : undefined;
    } else if (isPlainObject(current)) {
      current = Object.prototype.hasOwnProperty.call(current, segment) ? (current as SafeObject)[segment] : undefined;
    } else {
      return undefined;
    }
  }
  return current;
}

/** How a value is written into text: strings as they are, other JSON as JSON, nothing as empty. */
export function valueToText(value: SafeValue | undefined): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Resolves a dot path (root first) against the values of a run. */
export interface PathResolver {
  resolve(path: readonly string[]): SafeValue | undefined;
}
