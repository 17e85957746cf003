import { sql } from 'kysely';
import type { Storage } from './database.js';

/** Whether the database answers `select 1` within `timeoutMs` (a failure or a late answer is false). */
export async function storageAnswers(storage: Storage, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([sql`select 1`.execute(storage.db).then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
