import { sql, type Kysely } from 'kysely';
import type { Client as PgClient } from 'pg';

/** Longest wait for the listening connection; as for the pool (database.ts). */
const CONNECT_TIMEOUT_MS = 10_000;
/** A lost listening connection is opened again after 1 s, then 2, 4 … up to 30 s. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** TCP keep-alive probes from this idle time on, so a connection a NAT or failover dropped silently is noticed. */
const KEEP_ALIVE_AFTER_MS = 30_000;

export interface NotificationEvents {
  message(payload: string): void;
  /** The connection was lost and is listening again: notifications sent in between were missed. */
  resumed(): void;
  failed(error: Error): void;
}

export interface NotificationListener {
  close(): Promise<void>;
}

/** Sends a PostgreSQL NOTIFY on `channel`, delivered to every listener once the statement ends. */
export async function notify(db: Kysely<unknown>, channel: string, payload: string): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}

/**
 * LISTENs on `channel` over a connection of its own (a pooled one goes back to the pool between
 * queries, and its notifications with it), opened again whenever it is lost. Resolves once it
 * listens, or once the first attempt failed. `channel` is a plain lowercase identifier.
 */
export async function listenForNotifications(databaseUrl: string, channel: string, events: NotificationEvents): Promise<NotificationListener> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
  const { default: pg } = await import('pg');
  let closed = false;
  let client: PgClient | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = FIRST_RETRY_MS;
  let listenedBefore = false;

  const connect = async (): Promise<void> => {
    const connection = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEP_ALIVE_AFTER_MS,
    });
    let lost = false;
    const lose = (error: Error | undefined) => {
      if (lost) return;
      lost = true;
      if (client === connection) client = undefined;
      connection.end().catch(() => undefined);
      if (closed) return;
      if (error !== undefined) events.failed(error);
      retryTimer = setTimeout(() => void connect(), retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
    };
    // Without an 'error' listener, pg re-throws a lost connection's error as an uncaught exception.
    connection.on('error', lose);
    connection.on('end', () => lose(new Error('the listening connection ended')));
    connection.on('notification', (notification) => {
      if (notification.channel === channel && notification.payload !== undefined) events.message(notification.payload);
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${channel}`);
    } catch (error) {
      lose(error as Error);
      return;
    }
    if (closed || lost) {
      lose(undefined);
      return;
    }
    client = connection;
    retryMs = FIRST_RETRY_MS;
    if (listenedBefore) events.resumed();
    listenedBefore = true;
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
    },
  };
}
