/**
 * What the CLI prints. `--json` output is the admin API's JSON as it is, so scripts can rely
 * on the shapes documented in docs/admin-api.md; the default is a readable table.
 *
 * Everything the CLI prints may hold text a caller sent the gateway (a `model` value, a
 * payload, a key name), and an operator's terminal obeys the escape sequences in it: it could
 * clear the screen, print a fake prompt or hide a link. So every text this module writes goes
 * through `inert` first.
 */

import { createInterface } from 'node:readline/promises';

/** A failure the CLI reports as one line on stderr, exiting non-zero. */
export class CliError extends Error {
  override name = 'CliError';
}

/**
 * C0 controls (ESC, BEL, CR, backspace…), DEL, C1 controls (0x9B is a one-byte CSI on some
 * terminals) and the bidirectional overrides that reorder what a line seems to say.
 */
// The point of these patterns is to match control characters.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escapeCharacter = (character: string): string => {
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * The text with every control character written as a visible escape (`\x1b`), so a terminal
 * shows it instead of obeying it. `keepLines` leaves newlines and tabs for multi-line text.
 */
export function inert(text: string, options: { keepLines?: boolean } = {}): string {
  return text.replace(options.keepLines === true ? CONTROL_CHARACTERS_BUT_LINES : CONTROL_CHARACTERS, escapeCharacter);
}

/** Writes text for people to stdout, its lines kept and every other control character escaped. */
export function printText(text: string): void {
  process.stdout.write(inert(text, { keepLines: true }));
}

/**
 * Pretty JSON. JSON.stringify escapes C0 controls in strings but leaves DEL and the C1 range
 * raw; they are written as \u escapes, which parse to the same string.
 */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${jsonText(value)}\n`);
}

/** Columns padded to their widest cell; the header row in capitals. */
export function printTable(headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const safeRows = rows.map((row) => row.map((cell) => inert(cell)));
  const widths = headers.map((header, column) => Math.max(header.length, ...safeRows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(headers.map((header) => header.toUpperCase())), ...safeRows.map(line)].join('\n')}\n`);
}

/** One `label  value` line per field, labels aligned. */
export function printFields(fields: readonly (readonly [string, string])[]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  process.stdout.write(`${fields.map(([label, value]) => `${label.padEnd(width)}  ${inert(value)}`).join('\n')}\n`);
}

/**
 * A sum of US dollars as the CLI prints it: cents for a dollar or more (`$5.00`, `$1,234.50`), up to three
 * significant digits below (`$0.011`, `$0.000053`), never more than six decimals, and
 * `<$0.000001` for a cost too small to show rather than a misleading `$0.00`.
 */
export function formatUsd(value: number): string {
  const size = Math.abs(value);
  if (size === 0) return '$0.00';
  const sign = value < 0 ? '-' : '';
  if (size < 0.0000005) return `${sign}<$0.000001`;
  const shown = size >= 1 ? size : Number(size.toPrecision(3));
  return `${sign}$${shown.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: size >= 1 ? 2 : 6 })}`;
}

/** A sum of dollars, or `-` for none (no limit). */
export function moneyOrDash(value: number | null): string {
  return value === null ? '-' : formatUsd(value);
}

/** How an absent value (no limit, no restriction) reads in a table. */
export function orDash(value: string | number | null): string {
  return value === null ? '-' : String(value);
}

/** A warning on stderr: the command goes on. */
export function printWarning(message: string): void {
  process.stderr.write(`modelgate: warning: ${inert(message)}\n`);
}

/** Asks a question on the terminal and resolves with the answer line. */
export async function ask(question: string): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await terminal.question(inert(question));
  } finally {
    terminal.close();
  }
}
