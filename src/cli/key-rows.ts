import { parse } from 'csv-parse/sync';
import { CliError } from './output.js';

/**
 * The rows of `keys create --csv FILE`: `name,end_user` a line (RFC 4180 quoting), an optional
 * header line `name,end_user`, an empty end user for none. The dashboard's dialog reads the
 * same shape (web/src/pages/key-rows.ts).
 */

export interface KeyRow {
  name: string;
  /** Stored in the key's metadata as `endUser`; null for none. */
  endUser: string | null;
}

const MAX_NAME = 200;
/** A metadata value's bound in the admin API. */
const MAX_END_USER = 500;

/** CSV text as records of fields (RFC 4180 quoting, CRLF or LF, a byte order mark left out); an empty line is a record of one empty field. */
function records(text: string): string[][] {
  try {
    return parse(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false });
  } catch (error) {
    throw new CliError(`the CSV cannot be read: ${(error as Error).message}`);
  }
}

/** The keys to create, in file order; a bad line is an error naming its line number. */
export function parseKeyRows(text: string, maxRows: number): KeyRow[] {
  const all = records(text);
  const header = all[0]?.map((cell) => cell.trim().toLowerCase());
  const body = header !== undefined && header[0] === 'name' && (header[1] === undefined || header[1] === 'end_user') ? all.slice(1) : all;
  const offset = body === all ? 1 : 2;
  const rows: KeyRow[] = [];
  for (const [index, cells] of body.entries()) {
    const line = index + offset;
    if (cells.length === 1 && cells[0]!.trim() === '') continue;
    if (cells.length > 2) throw new CliError(`line ${line} of the CSV has ${cells.length} fields; each line is name,end_user`);
    const name = cells[0]!.trim();
    const endUser = (cells[1] ?? '').trim();
    if (name === '' || name.length > MAX_NAME) throw new CliError(`line ${line} of the CSV: name must be 1-${MAX_NAME} characters`);
    if (endUser.length > MAX_END_USER) throw new CliError(`line ${line} of the CSV: end_user may be at most ${MAX_END_USER} characters`);
    rows.push({ name, endUser: endUser === '' ? null : endUser });
  }
  if (rows.length === 0) throw new CliError('the CSV has no keys: one line name,end_user a key');
  if (rows.length > maxRows) throw new CliError(`the CSV has ${rows.length} keys; at most ${maxRows} a run`);
  return rows;
}
