/**
 * What the CLI prints. `--json` output is the admin API's JSON as it is, so scripts can rely
 * on the shapes documented in docs/admin-api.md; the default is a readable table.
 */

/** A failure the CLI reports as one line on stderr, exiting non-zero. */
export class CliError extends Error {
  override name = 'CliError';
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Columns padded to their widest cell; the header row in capitals. */
export function printTable(headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(headers.map((header) => header.toUpperCase())), ...rows.map(line)].join('\n')}\n`);
}

/** One `label  value` line per field, labels aligned. */
export function printFields(fields: readonly (readonly [string, string])[]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  process.stdout.write(`${fields.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n')}\n`);
}

/** How an absent value (no limit, no restriction) reads in a table. */
export function orDash(value: string | number | null): string {
  return value === null ? '-' : String(value);
}
