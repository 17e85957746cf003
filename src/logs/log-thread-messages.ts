import type { StorageLocation } from '../storage/index.js';
import type { LogEntryOptions, QueuedRequest } from './log-entry.js';
import type { RefusedLogRow } from './log-insert.js';

/** What the writer's thread is started with (workerData): plain data. */
export interface LogThreadData {
  storage: StorageLocation;
  entries: LogEntryOptions;
}

/** Messages to the thread. */
export type LogThreadRequest = { type: 'write'; id: number; records: readonly QueuedRequest[] } | { type: 'close' };

/**
 * Messages from the thread. A batch's answer hands back (moves) the buffers its large bodies
 * came in (`lent`), for the next batch to be copied into.
 */
export type LogThreadReply =
  | { type: 'written'; id: number; refused: RefusedLogRow[]; lent?: ArrayBuffer[] }
  | { type: 'failed'; id: number; message: string; code: string | undefined; lent?: ArrayBuffer[] }
  | { type: 'connection-failed'; message: string };
