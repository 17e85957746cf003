import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** How often the background thread checkpoints the WAL. */
const INTERVAL_MS = 1000;

// The thread's code: its own connection to the same file, a passive checkpoint (it never
// blocks the writer) on an interval. CommonJS, so it needs no file of its own.
const THREAD = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy with another process's checkpoint: the next tick catches up
  }
}, workerData.intervalMs);
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the event loop. SQLite checkpoints in the connection that
 * commits, every 1000 pages: copying pages into the database file and an fsync, 10–40 ms
 * during which no request is served. The writer's own checkpoints are turned off while a
 * thread with its own connection does them; if that thread ever fails, they are turned back on.
 */
export function startCheckpointer(sqlite: SqliteDatabase.Database, onFailure: (error: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { driver, file: sqlite.name, intervalMs: INTERVAL_MS } });
  worker.unref();
  sqlite.pragma('wal_autocheckpoint = 0');
  let stopping = false;
  const fallBack = (error: Error) => {
    if (stopping) return;
    sqlite.pragma('wal_autocheckpoint = 1000');
    onFailure(error);
  };
  worker.once('error', fallBack);
  worker.once('exit', (code) => fallBack(new Error(`the checkpoint thread exited with code ${code}`)));
  return {
    async stop() {
      stopping = true;
      sqlite.pragma('wal_autocheckpoint = 1000');
      await worker.terminate();
    },
  };
}
