import { sql, type Kysely } from 'kysely';
import { microToUsd } from '../limits/index.js';
import type { Database } from '../storage/index.js';

/**
 * What keys spent in the current UTC day and month, read from the request log: what their
 * daily token cap and monthly cost cap count against. One query for a page of keys, on the
 * (key_id, started_at) index.
 */

export interface KeySpendView {
  key_id: string;
  today: { tokens: number; cost_usd: number };
  month: { tokens: number; cost_usd: number };
}

export const MAX_SPEND_KEYS = 200;

export async function spendOfKeys(db: Kysely<Database>, keyIds: readonly string[], now: number = Date.now()): Promise<KeySpendView[]> {
  if (keyIds.length === 0) return [];
  const date = new Date(now);
  const dayStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  const monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const today = (column: 'total_tokens' | 'cost_micro_usd') => sql<number | null>`sum(case when started_at >= ${dayStart} then ${sql.ref(column)} else 0 end)`;
  const rows = await db
    .selectFrom('request_logs')
    .select([
      'key_id',
      today('total_tokens').as('day_tokens'),
      today('cost_micro_usd').as('day_cost'),
      sql<number | null>`sum(total_tokens)`.as('month_tokens'),
      sql<number | null>`sum(cost_micro_usd)`.as('month_cost'),
    ])
    .where('key_id', 'in', keyIds)
    .where('started_at', '>=', monthStart)
    .groupBy('key_id')
    .execute();
  const byKey = new Map(rows.map((row) => [row.key_id, row]));
  return keyIds.map((keyId) => {
    const row = byKey.get(keyId);
    return {
      key_id: keyId,
      today: { tokens: Number(row?.day_tokens ?? 0), cost_usd: microToUsd(Number(row?.day_cost ?? 0)) },
      month: { tokens: Number(row?.month_tokens ?? 0), cost_usd: microToUsd(Number(row?.month_cost ?? 0)) },
    };
  });
}
