import { sql, type Kysely, type Selectable } from 'kysely';
import { GatewayError } from '../errors/index.js';
import type { Database, TeamsTable } from '../storage/index.js';

export type TeamRow = Selectable<TeamsTable>;

/** The team every project belongs to until moved; created by migration 0050, never deleted. */
export const DEFAULT_TEAM_ID = 'default';

/** A team with what the teams list shows of it: its projects and how many keys each holds. */
export interface TeamSummary {
  row: TeamRow;
  projects: { id: string; name: string; keys: number }[];
}

/** A team as the admin API shows it (docs/admin-api.md#teams). */
export interface TeamView {
  id: string;
  name: string;
  projects: { id: string; name: string; key_count: number }[];
  /** Keys not revoked, over the team's projects. */
  key_count: number;
  created_at: string;
}

export function toTeamView({ row, projects }: TeamSummary): TeamView {
  return {
    id: row.id,
    name: row.name,
    projects: projects.map((project) => ({ id: project.id, name: project.name, key_count: project.keys })),
    key_count: projects.reduce((sum, project) => sum + project.keys, 0),
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** Keys that still count: revoked ones are kept for the log's sake but hold nothing. */
const COUNTED_KEY = sql<boolean>`api_keys.status <> 'revoked'`;

/** Teams hold projects (docs/admin-api.md#teams); a project's team is `projects.team_id`. */
export class TeamStore {
  constructor(private readonly db: Kysely<Database>) {}

  async find(id: string): Promise<TeamRow | undefined> {
    return this.db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The team, or a 404 naming the field it came from. */
  async get(id: string, param: string | null = null): Promise<TeamRow> {
    const row = await this.find(id);
    if (row === undefined) throw new GatewayError('not_found', `There is no team "${id}". GET /admin/v1/teams lists them.`, { param });
    return row;
  }

  /** Teams (all, or these ids) in creation order with their projects and key counts. */
  async summaries(ids: readonly string[] | null): Promise<TeamSummary[]> {
    if (ids !== null && ids.length === 0) return [];
    let teams = this.db.selectFrom('teams').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc');
    if (ids !== null) teams = teams.where('id', 'in', ids);
    const rows = await teams.execute();
    let projects = this.db
      .selectFrom('projects')
      .leftJoin('api_keys', (join) => join.onRef('api_keys.project_id', '=', 'projects.id').on(COUNTED_KEY))
      .select(['projects.id', 'projects.name', 'projects.team_id', sql<number>`count(api_keys.id)`.as('keys')])
      .groupBy(['projects.id', 'projects.name', 'projects.team_id'])
      .orderBy('projects.id');
    if (ids !== null) projects = projects.where('projects.team_id', 'in', ids);
    const byTeam = new Map<string, TeamSummary['projects']>();
    for (const project of await projects.execute()) {
      const list = byTeam.get(project.team_id) ?? [];
      list.push({ id: project.id, name: project.name, keys: Number(project.keys) });
      byTeam.set(project.team_id, list);
    }
    return rows.map((row) => ({ row, projects: byTeam.get(row.id) ?? [] }));
  }

  async create(id: string, name: string = id): Promise<TeamRow> {
    const row: TeamRow = { id, name, created_at: Date.now() };
    // DO NOTHING on either unique column (id, name) keeps a duplicate a 409, never a driver error.
    const result = await this.db.insertInto('teams').values(row).onConflict((conflict) => conflict.doNothing()).executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0n) === 0) throw await this.taken(id, name);
    return row;
  }

  async rename(id: string, name: string): Promise<TeamRow> {
    const before = await this.get(id);
    if (before.name === name) return before;
    const other = await this.db.selectFrom('teams').select('id').where('name', '=', name).executeTakeFirst();
    if (other !== undefined) throw new GatewayError('conflict', `Team "${other.id}" is already named "${name}"; choose another name.`, { param: 'name', retryable: false });
    await this.db.updateTable('teams').set({ name }).where('id', '=', id).execute();
    return { ...before, name };
  }

  /**
   * Deletes an empty team. `default` stays (projects fall back to it), and a team that still
   * holds projects is refused with their ids: move them first, so no project is left teamless.
   */
  async delete(id: string): Promise<TeamRow> {
    const row = await this.get(id);
    if (id === DEFAULT_TEAM_ID) throw new GatewayError('conflict', 'The default team cannot be deleted: projects without another team belong to it.', { retryable: false });
    return this.db.transaction().execute(async (trx) => {
      // Holds the team's row until the delete commits: a move into it (ProjectStore.setTeam) waits, then finds no team.
      await trx.updateTable('teams').set({ name: sql<string>`name` }).where('id', '=', id).execute();
      const projects = await trx.selectFrom('projects').select('id').where('team_id', '=', id).orderBy('id').execute();
      if (projects.length > 0) {
        const names = projects.map((project) => `"${project.id}"`).join(', ');
        throw new GatewayError('conflict', `Team "${id}" still holds ${projects.length === 1 ? 'project' : 'projects'} ${names}; move ${projects.length === 1 ? 'it' : 'them'} to another team first (PATCH /admin/v1/projects/{id} with team_id).`, {
          retryable: false,
        });
      }
      await trx.deleteFrom('teams').where('id', '=', id).execute();
      return row;
    });
  }

  private async taken(id: string, name: string): Promise<GatewayError> {
    const byId = await this.find(id);
    return byId !== undefined
      ? new GatewayError('conflict', `A team with id "${id}" already exists.`, { param: 'id', retryable: false })
      : new GatewayError('conflict', `Another team is already named "${name}"; choose another name.`, { param: 'name', retryable: false });
  }
}
