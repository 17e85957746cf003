// The request log writer's thread (log-writer-thread.ts starts it): batches of queued records
// in, rows written through a connection of its own, one batch at a time, an answer per batch.
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { openStorage, type Storage } from '../storage/index.js';
import { toLogRow } from './log-entry.js';
import { logRowInsert, type LogRowInsert, type RefusedLogRow } from './log-insert.js';
import type { LogThreadData, LogThreadReply, LogThreadRequest } from './log-thread-messages.js';

interface Connection {
  storage: Storage;
  insert: LogRowInsert;
}

/** Answers the writer's messages on `port` until it is asked to close. */
export function serveLogWrites(port: MessagePort, { storage: location, entries }: LogThreadData): void {
  const reply = (message: LogThreadReply) => port.postMessage(message, message.type === 'connection-failed' ? [] : (message.lent ?? []));
  let connection: Promise<Connection> | undefined;

  /** The connection, opened on first use and again after it could not be (the database was away). */
  function connect(): Promise<Connection> {
    connection ??= openStorage({ ...location, migrate: false, onConnectionError: (error) => reply({ type: 'connection-failed', message: error.message }) }).then(
      (storage) => ({ storage, insert: logRowInsert(storage) }),
      (error: unknown) => {
        connection = undefined;
        throw error;
      },
    );
    return connection;
  }

  async function write({ id, records }: Extract<LogThreadRequest, { type: 'write' }>): Promise<void> {
    const refused: RefusedLogRow[] = [];
    // The rows copy what they keep of the bodies, so the buffers go back with the answer.
    const lent = [...new Set(records.flatMap(({ record }) => (record.requestPayloadJson?.buffer instanceof ArrayBuffer ? [record.requestPayloadJson.buffer] : [])))];
    try {
      const { insert } = await connect();
      const rows = [];
      for (const record of records) {
        try {
          rows.push(toLogRow(record, entries));
        } catch (error) {
          refused.push({ requestId: record.record.requestId, reason: `could not be made a row: ${(error as Error).message}`.slice(0, 300) });
        }
      }
      refused.push(...(await insert(rows)));
      reply({ type: 'written', id, refused, lent });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      reply({ type: 'failed', id, message: (error as Error).message, code: typeof code === 'string' ? code : undefined, lent });
    }
  }

  async function close(): Promise<void> {
    const open = await connection?.catch(() => undefined);
    await open?.storage.close();
    port.close();
  }

  // One message at a time, in order: a batch is written before the next, and close comes last.
  let done: Promise<void> = Promise.resolve();
  port.on('message', (message: LogThreadRequest) => {
    done = done.then(() => (message.type === 'write' ? write(message) : close()));
  });
}

if (!isMainThread && parentPort !== null) serveLogWrites(parentPort, workerData as LogThreadData);
