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

const DURATION_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration such as 90s, 15m, 24h or 7d, in milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d{1,6})([smhd])$/.exec(value);
  if (match === null) throw new InvalidArgumentError('expected a duration such as 90s, 15m, 24h or 7d');
  return Number(match[1]) * DURATION_MS[match[2]!]!;
}

/** When a key expires: a duration from now (30d) or an ISO 8601 time, passed on as an ISO time; `none` for never (update only). */
export function parseExpiry(value: string): string | Clear {
  if (value === CLEAR) return CLEAR;
  if (/^\d{1,6}[smhd]$/.test(value)) return new Date(Date.now() + parseDuration(value)).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) throw new InvalidArgumentError(`expected a duration from now (30d, 12h) or an ISO 8601 time (2027-01-31T00:00:00Z), or "${CLEAR}" for never`);
  return value;
}

/** `--meta name=value`, repeatable: the key's metadata so far with this field added. */
export function collectMetadata(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const separator = value.indexOf('=');
  if (separator < 1) throw new InvalidArgumentError('expected name=value');
  return { ...previous, [value.slice(0, separator)]: value.slice(separator + 1) };
}
