import { sql, type Kysely } from 'kysely';
import { invalidBody } from '../errors/index.js';
import type { Database } from '../storage/index.js';
import type { KeyRow } from './key-store.js';
import type { KeyStatus } from './types.js';

/**
 * One page of keys, newest first, for the dashboard's key list: filtered by project and
 * state, searched by name or id, paged by keyset (the created time and id of the last row
 * shown) so page 2,000 costs what page 1 does. Each filter combination has an index in that
 * order (migration 0016-accounts-key-and-log-list-indexes), so a page reads about as many
 * rows as it shows, also with 100,000 keys.
 */

export interface KeyPageQuery {
  projectId?: string | undefined;
  /** Only keys of these projects (a team admin's; none when empty). */
  projectIds?: readonly string[] | undefined;
  status?: KeyStatus | undefined;
  /** Part of the name (any case), or the start of the id. */
  search?: string | undefined;
  /** Only keys with this tag. */
  tag?: string | undefined;
  limit: number;
  cursor?: KeyCursor | undefined;
}

export interface KeyCursor {
  createdAt: number;
  id: string;
}

export interface KeyPage {
  rows: KeyRow[];
  next: KeyCursor | null;
}

export function encodeKeyCursor(cursor: KeyCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

export function parseKeyCursor(value: string): KeyCursor {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(decoded)) {
      const [createdAt, id] = decoded as unknown[];
      if (Number.isSafeInteger(createdAt) && typeof id === 'string' && id.length <= 100) return { createdAt: createdAt as number, id };
    }
  } catch {
    // falls through to the 400
  }
  throw invalidBody('cursor is not a cursor this API returned; pass next_cursor from the previous page unchanged.', 'cursor');
}

/** LIKE's own characters taken literally. */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

export async function pageOfKeys(db: Kysely<Database>, query: KeyPageQuery): Promise<KeyPage> {
  let select = db.selectFrom('api_keys').selectAll();
  if (query.projectId !== undefined) select = select.where('project_id', '=', query.projectId);
  if (query.projectIds !== undefined) {
    select = query.projectIds.length === 0 ? select.where(sql<boolean>`1 = 0`) : select.where('project_id', 'in', query.projectIds);
  }
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  const search = query.search?.trim();
  if (search !== undefined && search.length > 0) {
    const contains = `%${likeEscaped(search.toLowerCase())}%`;
    const startsWith = `${likeEscaped(search)}%`;
    // ESCAPE named: SQLite has no default escape character, PostgreSQL's is the backslash.
    select = select.where(sql<boolean>`(lower(name) like ${contains} escape '\\' or id like ${startsWith} escape '\\')`);
  }
  if (query.tag !== undefined) {
    // Tags are stored as a JSON array of strings without quotes or backslashes: the quoted tag is one element.
    select = select.where(sql<boolean>`tags like ${`%${likeEscaped(JSON.stringify(query.tag))}%`} escape '\\'`);
  }
  const cursor = query.cursor;
  if (cursor !== undefined) {
    select = select.where((eb) =>
      eb.or([eb('created_at', '<', cursor.createdAt), eb.and([eb('created_at', '=', cursor.createdAt), eb('id', '<', cursor.id)])]),
    );
  }
  const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
  const more = rows.length > query.limit;
  if (more) rows.pop();
  const last = rows.at(-1);
  return { rows, next: more && last !== undefined ? { createdAt: last.created_at, id: last.id } : null };
}
