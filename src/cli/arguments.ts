import { InvalidArgumentError } from 'commander';
import { SCOPES, type Scope } from '../keys/index.js';

/** Option-value parsers shared by the command groups. A parser's error names what to send. */

/**
 * The word that clears a limit or the model list in `keys update`. Parsers return it as it
 * is (commander turns a parser's null into ''); `orNull` maps it to the API's null.
 */
export const CLEAR = 'none';
export type Clear = typeof CLEAR;

export function orNull<T>(value: T | Clear): T | null {
  return value === CLEAR ? null : value;
}

export function parseWholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

/** A positive whole number, or `none` to clear the limit. */
export function parseCountLimit(value: string): number | Clear {
  if (value === CLEAR) return CLEAR;
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError(`expected a whole number above 0, or "${CLEAR}" to clear it`);
  return Number(value);
}

/** A positive whole number, for a new key (no value means no limit: the option is left out). */
export function parseNewCountLimit(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('expected a whole number above 0; leave the option out for no limit');
  return Number(value);
}

/** A positive amount of USD, for a new key. */
export function parseNewUsdLimit(value: string): number {
  const amount = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || amount <= 0) {
    throw new InvalidArgumentError('expected an amount of USD above 0 such as 25 or 12.50; leave the option out for no cap');
  }
  return amount;
}

/** A positive amount of USD, or `none` to clear the limit. */
export function parseUsdLimit(value: string): number | Clear {
  if (value === CLEAR) return CLEAR;
  const amount = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || amount <= 0) {
    throw new InvalidArgumentError(`expected an amount of USD above 0 such as 25 or 12.50, or "${CLEAR}" to clear it`);
  }
  return amount;
}

/** A comma-separated list with empty items dropped. */
export function parseList(value: string): string[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (items.length === 0) throw new InvalidArgumentError('expected a comma-separated list');
  return items;
}

/** Model ids/aliases, or `none` for any model. */
export function parseModels(value: string): string[] | Clear {
  return value === CLEAR ? CLEAR : parseList(value);
}

export function parseScopes(value: string): Scope[] {
  const scopes = parseList(value);
  const unknown = scopes.find((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown !== undefined) throw new InvalidArgumentError(`unknown scope "${unknown}"; the scopes are ${SCOPES.join(', ')}`);
  return scopes as Scope[];
}
