import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { PeriodSpan } from '../limits/index.js';
import type { Database } from '../storage/index.js';
import type { Budget, BudgetLevel, BudgetPeriod } from './types.js';

/** What an administrator sets on a budget (the rest keeps its value on an update). */
export interface BudgetFields {
  usd: number | null;
  tokens: number | null;
  period: BudgetPeriod;
  resetTz: string;
  thresholds: readonly number[];
}

type BudgetRow = Selectable<Database['budgets']>;

function toBudget(row: BudgetRow): Budget {
  return {
    id: row.id,
    level: row.level as BudgetLevel,
    target: row.target,
    usd: row.usd === null ? null : Number(row.usd),
    tokens: row.tokens === null ? null : Number(row.tokens),
    period: row.period as BudgetPeriod,
    resetTz: row.reset_tz,
    thresholds: JSON.parse(row.thresholds) as number[],
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Budgets in the database: one per level and target. */
export class BudgetStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<Budget[]> {
    const rows = await this.db.selectFrom('budgets').selectAll().orderBy('id').execute();
    return rows.map((row) => toBudget(row));
  }

  /**
   * The budgets on these teams, on their projects and on their projects' keys: what a team
   * admin of them sees. End-user budgets belong to no team.
   */
  async listOfTeams(teamIds: readonly string[]): Promise<Budget[]> {
    if (teamIds.length === 0) return [];
    const projects = this.db.selectFrom('projects').select('id').where('team_id', 'in', [...teamIds]);
    const rows = await this.db
      .selectFrom('budgets')
      .selectAll()
      .where((row) =>
        row.or([
          row.and([row('level', '=', 'team'), row('target', 'in', [...teamIds])]),
          row.and([row('level', '=', 'project'), row('target', 'in', projects)]),
          row.and([row('level', '=', 'key'), row('target', 'in', this.db.selectFrom('api_keys').select('id').where('project_id', 'in', projects))]),
        ]),
      )
      .orderBy('id')
      .execute();
    return rows.map((row) => toBudget(row));
  }

  /** The team a team, project or key belongs to; undefined for an unknown one. */
  async teamOf(level: 'team' | 'project' | 'key', id: string): Promise<string | undefined> {
    if (level === 'team') return (await this.names('team', id)) === undefined ? undefined : id;
    const projectId = level === 'project' ? id : (await this.db.selectFrom('api_keys').select('project_id').where('id', '=', id).executeTakeFirst())?.project_id;
    if (projectId === undefined) return undefined;
    return (await this.db.selectFrom('projects').select('team_id').where('id', '=', projectId).executeTakeFirst())?.team_id;
  }

  async get(id: string): Promise<Budget | undefined> {
    const row = await this.db.selectFrom('budgets').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toBudget(row);
  }

  async find(level: BudgetLevel, target: string): Promise<Budget | undefined> {
    const row = await this.db.selectFrom('budgets').selectAll().where('level', '=', level).where('target', '=', target).executeTakeFirst();
    return row === undefined ? undefined : toBudget(row);
  }

  async create(level: BudgetLevel, target: string, fields: BudgetFields, now = Date.now()): Promise<Budget> {
    const id = `bud_${randomBytes(8).toString('hex')}`;
    await this.db
      .insertInto('budgets')
      .values({
        id,
        level,
        target,
        usd: fields.usd,
        tokens: fields.tokens,
        period: fields.period,
        reset_tz: fields.resetTz,
        thresholds: JSON.stringify(fields.thresholds),
        created_at: now,
        updated_at: now,
      })
      .execute();
    return (await this.get(id))!;
  }

  async update(id: string, fields: BudgetFields, now = Date.now()): Promise<Budget | undefined> {
    await this.db
      .updateTable('budgets')
      .set({ usd: fields.usd, tokens: fields.tokens, period: fields.period, reset_tz: fields.resetTz, thresholds: JSON.stringify(fields.thresholds), updated_at: now })
      .where('id', '=', id)
      .execute();
    return this.get(id);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('budgets').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Each project's team (budgets on a team hold every request of its projects). */
  async projectTeams(): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('projects').select(['id', 'team_id']).execute();
    return new Map(rows.map((row) => [row.id, row.team_id]));
  }

  /** Names of keys, projects and teams (what refusals and alerts call a level). */
  async names(level: 'team' | 'project' | 'key', id: string): Promise<string | undefined> {
    const table = level === 'team' ? 'teams' : level === 'project' ? 'projects' : 'api_keys';
    const row = await this.db.selectFrom(table).select('name').where('id', '=', id).executeTakeFirst();
    return row?.name;
  }

  /**
   * What a budget's requests spent in a period, from the request log: tokens and micro-USD of
   * the records under it (`endUsers` are the stored forms of an end user's id: plain and hashed).
   */
  async spentIn(budget: Budget, span: PeriodSpan, endUsers: readonly string[]): Promise<{ tokens: number; costMicroUsd: number }> {
    let query = this.db
      .selectFrom('request_logs')
      .select([sql<number | null>`sum(total_tokens)`.as('tokens'), sql<number | null>`sum(cost_micro_usd)`.as('cost')])
      .where('started_at', '>=', span.start);
    if (budget.level === 'key') query = query.where('key_id', '=', budget.target);
    else if (budget.level === 'project') query = query.where('project_id', '=', budget.target);
    else if (budget.level === 'team') query = query.where('project_id', 'in', this.db.selectFrom('projects').select('id').where('team_id', '=', budget.target));
    else query = query.where('end_user', 'in', [...endUsers]);
    const row = await query.executeTakeFirst();
    return { tokens: Number(row?.tokens ?? 0), costMicroUsd: Number(row?.cost ?? 0) };
  }
}
