import type { Kysely, Selectable } from 'kysely';
import type { AgentRunsTable, Database } from '../../storage/index.js';

export type RunRow = Selectable<AgentRunsTable>;

export interface RunOutcome {
  status: 'succeeded' | 'failed';
  errorCode: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
  costMicroUsd: number | null;
  trace: unknown;
}

/** One row per run: which agent version ran, for whom, and how it ended. */
export class RunStore {
  constructor(private readonly db: Kysely<Database>) {}

  async start(row: Omit<RunRow, 'status' | 'error_code' | 'prompt_tokens' | 'completion_tokens' | 'total_tokens' | 'cost_micro_usd' | 'trace' | 'finished_at'>): Promise<void> {
    await this.db
      .insertInto('agent_runs')
      .values({ ...row, status: 'running', error_code: null, prompt_tokens: null, completion_tokens: null, total_tokens: null, cost_micro_usd: null, trace: null, finished_at: null })
      .execute();
  }

  async finish(id: string, outcome: RunOutcome): Promise<void> {
    await this.db
      .updateTable('agent_runs')
      .set({
        status: outcome.status,
        error_code: outcome.errorCode,
        prompt_tokens: outcome.promptTokens,
        completion_tokens: outcome.completionTokens,
        total_tokens: outcome.totalTokens,
        cost_micro_usd: outcome.costMicroUsd,
        trace: JSON.stringify(outcome.trace),
        finished_at: Date.now(),
      })
      .where('id', '=', id)
      .execute();
  }

  async get(id: string): Promise<RunRow | undefined> {
    return this.db.selectFrom('agent_runs').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
