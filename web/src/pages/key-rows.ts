import { parse } from 'csv-parse/browser/esm/sync';

/**
 * The rows of a CSV of keys to create, `name,end_user` a line (RFC 4180 quoting, an optional
 * header line `name,end_user`, an empty end user for none): the shape `modelgate keys create
 * --csv` reads (src/cli/key-rows.ts). The end user goes into the key's metadata as `endUser`.
 */

export interface KeyRow {
  name: string;
  endUser: string | null;
}

const MAX_NAME = 200;
const MAX_END_USER = 500;

/** CSV text as records of fields (RFC 4180 quoting, CRLF or LF, a byte order mark left out), or why it cannot be read. */
function records(text: string): string[][] | string {
  try {
    return parse(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false });
  } catch (error) {
    return (error as Error).message;
  }
}

/** The keys of the file, or the first problem with it (naming its line). */
export function parseKeyRows(text: string, maxRows: number): { rows: KeyRow[] } | { problem: string } {
  const all = records(text);
  if (typeof all === 'string') return { problem: `the file cannot be read: ${all}` };
  const header = all[0]?.map((cell) => cell.trim().toLowerCase());
  const body = header !== undefined && header[0] === 'name' && (header[1] === undefined || header[1] === 'end_user') ? all.slice(1) : all;
  const offset = body === all ? 1 : 2;
  const rows: KeyRow[] = [];
  for (const [index, cells] of body.entries()) {
    const line = index + offset;
    if (cells.length === 1 && cells[0]!.trim() === '') continue;
    if (cells.length > 2) return { problem: `line ${line} has ${cells.length} fields; each line is name,end_user` };
    const name = cells[0]!.trim();
    const endUser = (cells[1] ?? '').trim();
    if (name === '' || name.length > MAX_NAME) return { problem: `line ${line}: the name must be 1-${MAX_NAME} characters` };
    if (endUser.length > MAX_END_USER) return { problem: `line ${line}: the end user may be at most ${MAX_END_USER} characters` };
    rows.push({ name, endUser: endUser === '' ? null : endUser });
  }
  if (rows.length === 0) return { problem: 'the file has no keys: one line name,end_user a key' };
  if (rows.length > maxRows) return { problem: `the file has ${rows.length} keys; at most ${maxRows} at once` };
  return { rows };
}
