import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Dialect } from 'kysely';
import type { Pool as PgPool } from 'pg';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrations.js';
import { createPostgresPool, recoveringPool } from './postgres-pool.js';

export type StorageKind = 'sqlite' | 'postgres';

export interface Storage {
  readonly kind: StorageKind;
  readonly db: Kysely<Database>;
  /** The SQLite connection behind `db` (SQLite only), for the one write hot enough for a prepared statement: the request log. */
  readonly sqlite?: SqliteDatabase.Database;
  /** The PostgreSQL pool behind `db` (PostgreSQL only), for the same write. */
  readonly pg?: PgPool;
  /** Where it is, as plain data: what another thread opens its own connection with (the request log's writer). */
  readonly location: StorageLocation;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** `postgres://…` selects PostgreSQL; otherwise SQLite in dataDir. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** SQLite file name inside dataDir (tests use separate files). */
  sqliteFile?: string;
  /** Longest time one PostgreSQL statement may run; 0 = no limit (default 15 s). */
  statementTimeoutMs?: number;
  /** Told of every PostgreSQL connection that failed (default: nothing); the query that used it fails or is retried. */
  onConnectionError?: (error: Error) => void;
  /** false: the schema is taken as it is (a second connection of a process that migrated already); default true. */
  migrate?: boolean;
}

/** The settings that say which database to open. */
export type StorageLocation = Pick<StorageOptions, 'databaseUrl' | 'dataDir' | 'sqliteFile' | 'statementTimeoutMs'>;

/** The statement timeout when none is given: the default of database.statementTimeoutMs. */
const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

/**
 * Longest wait for a new PostgreSQL connection. pg's default is no limit: a database that
 * accepts connections but never answers (a pooler or proxy whose server is gone) held every
 * query for ever, start-up, the request log's writes and shutdown with them.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/** The page cache of each SQLite connection, KiB (SQLite's compiled-in default). */
const SQLITE_PAGE_CACHE_KIB = 2000;

function openSqlite(options: StorageOptions): SqliteDatabase.Database {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = join(options.dataDir, options.sqliteFile ?? 'modelgate.db');
  const sqlite = new SqliteDatabase(file);
  chmodSync(file, 0o600); // holds key hashes and request payloads
  // Lets the request log's retention give freed pages back to the file system (incremental_vacuum
  // after deletes). Takes effect only in a database that has no table yet: an older file keeps
  // its mode until a one-time VACUUM (docs/logging.md).
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  // WAL lets several processes (serve --workers N, the CLI) open the same file.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // better-sqlite3 builds SQLite with a 16 MiB page cache per connection, which the request
  // log's writes fill within seconds and never give back. SQLite's own default is enough: the
  // log's inserts touch the right-hand pages of a few indexes, and other reads are served by
  // the file system's cache.
  sqlite.pragma(`cache_size = -${SQLITE_PAGE_CACHE_KIB}`);
  return sqlite;
}

/** Opens storage and brings its schema to the latest migration. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  let sqlite: SqliteDatabase.Database | undefined;
  let pg: PgPool | undefined;
  let dialect: Dialect;
  if (options.databaseUrl === undefined) {
    sqlite = openSqlite(options);
    dialect = new SqliteDialect({ database: sqlite });
  } else {
    pg = await createPostgresPool(options.databaseUrl, {
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      onConnectionError: options.onConnectionError ?? (() => undefined),
    });
    dialect = new PostgresDialect({ pool: recoveringPool(pg) });
  }
  const kind: StorageKind = sqlite === undefined ? 'postgres' : 'sqlite';
  const db = new Kysely<Database>({ dialect });
  try {
    if (options.migrate !== false) await migrateToLatest(db as Kysely<unknown>, kind);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const location: StorageLocation = {
    databaseUrl: options.databaseUrl,
    dataDir: options.dataDir,
    ...(options.sqliteFile === undefined ? {} : { sqliteFile: options.sqliteFile }),
    ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
  };
  return { kind, db, ...(sqlite !== undefined ? { sqlite } : {}), ...(pg !== undefined ? { pg } : {}), location, close: () => db.destroy() };
}

/** Parses a JSON text column written by this code. */
export function parseJsonColumn<T>(value: string | null): T | null {
  return value === null ? null : (JSON.parse(value) as T);
}
