import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';

export type StorageKind = 'sqlite' | 'postgres';

export interface Storage {
  readonly kind: StorageKind;
  readonly db: Kysely<Database>;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** `postgres://…` selects PostgreSQL; otherwise SQLite in dataDir. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** SQLite file name inside dataDir (tests use separate files). */
  sqliteFile?: string;
}

// PostgreSQL returns bigint (int8) and numeric as strings; our values fit in a double.
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

function sqliteDialect(options: StorageOptions): SqliteDialect {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = join(options.dataDir, options.sqliteFile ?? 'modelgate.db');
  const sqlite = new SqliteDatabase(file);
  chmodSync(file, 0o600); // holds key hashes and request payloads
  // WAL lets several processes (serve --workers N, the CLI) open the same file.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return new SqliteDialect({ database: sqlite });
}

/** Opens storage and brings its schema to the latest migration. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  const kind: StorageKind = options.databaseUrl !== undefined ? 'postgres' : 'sqlite';
  const dialect =
    kind === 'postgres'
      ? new PostgresDialect({ pool: new pg.Pool({ connectionString: options.databaseUrl, max: 10, types: pgTypes }) })
      : sqliteDialect(options);
  const db = new Kysely<Database>({ dialect });
  try {
    await migrateToLatest(db as Kysely<unknown>);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { kind, db, close: () => db.destroy() };
}

/** Parses a JSON text column written by this code. */
export function parseJsonColumn<T>(value: string | null): T | null {
  return value === null ? null : (JSON.parse(value) as T);
}
