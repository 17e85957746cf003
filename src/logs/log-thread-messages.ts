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

/** Messages from the thread. */
export type LogThreadReply =
  | { type: 'written'; id: number; refused: RefusedLogRow[] }
  | { type: 'failed'; id: number; message: string; code: string | undefined }
  | { type: 'connection-failed'; message: string };
