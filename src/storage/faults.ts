/**
 * Which storage failures are the database being away (down, restarting, failing over,
 * unreachable, overloaded, too slow) rather than a fault in the statement or in the gateway.
 * The first kind is answered 503 `storage_unavailable` and retried; the second stays a 500.
 */

/** Socket-level failures Node reports while connecting to or talking with the database. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ECONNABORTED']);

/**
 * PostgreSQL SQLSTATEs of an unavailable server: class 08 (connection exception), 53
 * (insufficient resources: too many connections, disk full, out of memory), 57P01–57P03
 * (shutting down, crashed, not accepting connections yet) and 57014 (the statement timeout
 * fired: the database is too slow to answer in time).
 */
function unavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || /^57P0[123]$/.test(code) || code === '57014';
}

/**
 * SQLite result codes of a file that cannot be used right now: locked past the busy timeout,
 * an I/O error, a full disk, a file that cannot be opened (a lost volume).
 */
function unavailableSqliteCode(code: string): boolean {
  return code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_FULL' || code.startsWith('SQLITE_CANTOPEN');
}

/**
 * pg's own errors carry no code, only these messages: a connection that ended or failed
 * (the server went away mid-query, or a dead client was used), a connect that timed out, a
 * query whose answer did not arrive in time.
 */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Query read timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * Whether `error` (or the error it wraps, such as a failed migration's) means the database
 * cannot be reached or cannot answer now: worth a retry later.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || unavailableSqliteCode(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return unavailableSqlState(code);
  }
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return true;
  return cause !== error && isStorageUnavailable(cause);
}

/**
 * Whether `error` left the connection it happened on unusable, so it must be closed rather
 * than handed to the next query: pg's connection failures, not a server's SQL error answer.
 */
export function breaksConnection(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  return typeof message === 'string' && PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message));
}

const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 30_000;

/**
 * Runs `step` (opening storage, a first read) until the database answers: while it fails
 * because the database is away, waits 1 s, then 2, 4 … up to 30 s, telling `onWaiting` each
 * time. Any other failure (a wrong password, a failed migration) is thrown at once.
 */
export async function whenStorageAnswers<T>(step: () => Promise<T>, onWaiting: (error: unknown, retryInMs: number) => void | Promise<void>): Promise<T> {
  for (let waitMs = FIRST_WAIT_MS; ; waitMs = Math.min(waitMs * 2, MAX_WAIT_MS)) {
    try {
      return await step();
    } catch (error) {
      if (!isStorageUnavailable(error)) throw error;
      await onWaiting(error, waitMs);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
