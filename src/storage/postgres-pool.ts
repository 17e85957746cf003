import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type { Pool as PgPool, PoolClient } from 'pg';
import { breaksConnection } from './faults.js';

export interface PostgresPoolOptions {
  /** Longest wait for a new connection. */
  connectTimeoutMs: number;
  /** Longest time one statement may run (server side); 0 = no limit. */
  statementTimeoutMs: number;
  /** Called with every connection-level error of any pooled client (logged by the caller). */
  onConnectionError(error: Error): void;
}

// PostgreSQL returns bigint (int8) and numeric as strings; our values fit in a double.
const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * How much longer than the statement timeout the client waits for an answer. The server's
 * timeout answers a slow statement with an error; this one ends a wait for a server that
 * cannot answer at all (a network that went silent, a proxy holding the connection).
 */
const ANSWER_MARGIN_MS = 2_000;

/**
 * A PostgreSQL pool. pg is loaded only here: it takes a tenth of a second, for nothing with SQLite.
 *
 * pg emits a connection's failure as an 'error' event on its client. The pool listens only
 * while a client is idle, so a failure during a query (a failover, a reset by a proxy or NAT)
 * became an uncaught exception that ended the whole gateway. Every client gets a listener of
 * its own as it connects, whoever checks it out (queries, the log writer, a LISTEN client):
 * the query fails, the pool drops the client, and the next query opens a new connection.
 */
export async function createPostgresPool(databaseUrl: string, options: PostgresPoolOptions): Promise<PgPool> {
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format as 'text');
    },
  };
  const limited = options.statementTimeoutMs > 0;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    connectionTimeoutMillis: options.connectTimeoutMs,
    // TCP keep-alive notices a peer that vanished without a word (a NAT that forgot the flow).
    keepAlive: true,
    ...(limited ? { statement_timeout: options.statementTimeoutMs, query_timeout: options.statementTimeoutMs + ANSWER_MARGIN_MS } : {}),
    types,
  });
  pool.on('error', options.onConnectionError);
  pool.on('connect', (client) => client.on('error', options.onConnectionError));
  return pool;
}

/** A statement that only reads, so running it again on a new connection changes nothing. */
function isRead(sql: string): boolean {
  return /^\s*select\b/i.test(sql);
}

function isAnswerTimeout(error: unknown): boolean {
  return (error as Error).message === 'Query read timeout';
}

function transactionChange(sql: string): boolean | undefined {
  if (/^\s*(begin|start transaction)\b/i.test(sql)) return true;
  if (/^\s*(commit|rollback|end)\b/i.test(sql)) return false;
  return undefined;
}

/**
 * One checked-out connection as the query builder sees it. A read that fails because its
 * connection died (outside a transaction) runs once more on a fresh connection: a database
 * that restarted or failed over answers it, and the caller never sees the hiccup. A
 * connection whose failure left it unusable (a reset, a missed answer) is closed on release
 * rather than handed to the next query.
 */
class RecoveringClient implements PostgresPoolClient {
  private inTransaction = false;
  private broken: Error | undefined;

  constructor(
    private readonly pool: PgPool,
    private client: PoolClient,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof sqlOrCursor !== 'string') return this.client.query(sqlOrCursor as never) as unknown as PostgresCursor<R>;
    return this.run<R>(sqlOrCursor, parameters ?? []);
  }

  private async run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    const change = transactionChange(sql);
    try {
      const result = await this.send<R>(sql, parameters);
      if (change !== undefined) this.inTransaction = change;
      return result;
    } catch (error) {
      if (change === false) this.inTransaction = false;
      if (!breaksConnection(error)) throw error;
      this.broken = error as Error;
      // A missed answer is not retried: the wait would only double while the database is silent.
      if (this.inTransaction || !isRead(sql) || isAnswerTimeout(error)) throw error;
      this.client.release(this.broken);
      this.broken = undefined;
      this.client = await this.pool.connect();
      return this.send<R>(sql, parameters);
    }
  }

  private send<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    return this.client.query(sql, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>;
  }

  release(): void {
    this.client.release(this.broken);
  }
}

/** The pool as the query builder uses it: connections that recover from a dead connection. */
export function recoveringPool(pool: PgPool): PostgresPool {
  return {
    connect: async () => new RecoveringClient(pool, await pool.connect()),
    end: () => pool.end(),
  };
}
