import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { GatewayError } from '../errors/index.js';
import type { Database, ProjectsTable } from '../storage/index.js';

export type ProjectRow = Selectable<ProjectsTable>;

/** Project ids as they appear in URLs, flags and logs. */
export const PROJECT_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

export interface ProjectView {
  id: string;
  name: string;
  /** `allowedTools` of every key of the project at /mcp (docs/mcp.md); null = every tool. */
  allowed_tools: string[] | null;
  /** The team the project belongs to. */
  team_id: string;
  created_at: string;
}

export function toProjectView(row: ProjectRow): ProjectView {
  return {
    id: row.id,
    name: row.name,
    allowed_tools: row.allowed_tools === null ? null : (JSON.parse(row.allowed_tools) as string[]),
    team_id: row.team_id,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** Projects own keys (and agents). The `default` project is created by the first migration. */
/**
 * Writes the team's row, which holds it until the transaction commits, as a delete of the team
 * does (TeamStore.delete): of a project put into the team and the team's delete, the later sees
 * the other's outcome, so no project is left in a deleted team. Throws not_found for no team.
 */
async function holdTeam(trx: Transaction<Database>, teamId: string): Promise<void> {
  const team = await trx.updateTable('teams').set({ name: sql<string>`name` }).where('id', '=', teamId).executeTakeFirst();
  if (Number(team.numUpdatedRows) === 0) throw new GatewayError('not_found', `There is no team "${teamId}". GET /admin/v1/teams lists them.`, { param: 'team_id' });
}

export class ProjectStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<ProjectRow[]> {
    return this.db.selectFrom('projects').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  }

  /** The ids of the projects of these teams. */
  async idsOfTeams(teamIds: readonly string[]): Promise<string[]> {
    if (teamIds.length === 0) return [];
    const rows = await this.db.selectFrom('projects').select('id').where('team_id', 'in', teamIds).orderBy('id').execute();
    return rows.map((row) => row.id);
  }

  async find(id: string): Promise<ProjectRow | undefined> {
    return this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Creates a project in a team (which must exist: not_found names `team_id`). */
  async create(id: string, name: string = id, teamId = 'default'): Promise<ProjectRow> {
    const row: ProjectRow = { id, name, created_at: Date.now(), allowed_tools: null, team_id: teamId };
    const inserted = await this.db.transaction().execute(async (trx) => {
      await holdTeam(trx, teamId);
      // DO NOTHING on either unique column (id, name) keeps a duplicate a 409, never a driver error.
      const result = await trx
        .insertInto('projects')
        .values(row)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    });
    if (!inserted) {
      const taken = await this.find(id);
      throw new GatewayError(
        'conflict',
        taken !== undefined ? `A project with id "${id}" already exists.` : `Another project is already named "${name}"; choose another name.`,
        { retryable: false },
      );
    }
    return row;
  }

  /** The project's `allowedTools` (null: every tool, also for a project that does not exist). */
  async allowedToolsOf(id: string): Promise<string[] | null> {
    const row = await this.db.selectFrom('projects').select('allowed_tools').where('id', '=', id).executeTakeFirst();
    return row?.allowed_tools === null || row?.allowed_tools === undefined ? null : (JSON.parse(row.allowed_tools) as string[]);
  }

  /** Sets the project's `allowedTools` (null: every tool); the project must exist. */
  async setAllowedTools(id: string, allowedTools: string[] | null): Promise<ProjectRow> {
    await this.db.updateTable('projects').set({ allowed_tools: allowedTools === null ? null : JSON.stringify(allowedTools) }).where('id', '=', id).execute();
    const row = await this.find(id);
    if (row === undefined) throw new GatewayError('not_found', `There is no project "${id}". GET /admin/v1/projects lists the projects.`);
    return row;
  }

  /** Moves the project to another team (which must exist); its keys, agents and records go with it. */
  async setTeam(id: string, teamId: string): Promise<ProjectRow> {
    await this.db.transaction().execute(async (trx) => {
      await holdTeam(trx, teamId);
      await trx.updateTable('projects').set({ team_id: teamId }).where('id', '=', id).execute();
    });
    const row = await this.find(id);
    if (row === undefined) throw new GatewayError('not_found', `There is no project "${id}". GET /admin/v1/projects lists the projects.`);
    return row;
  }

  /** Creates the project on first use (keys created with a new `--project`). */
  async ensure(id: string): Promise<void> {
    await this.db
      .insertInto('projects')
      .values({ id, name: id, created_at: Date.now() })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    // The insert is skipped also when another project already uses this id as its name.
    if ((await this.find(id)) === undefined) {
      throw new GatewayError(
        'conflict',
        `There is no project "${id}", and it cannot be created because another project is named "${id}". Use that project's id.`,
        { retryable: false },
      );
    }
  }
}
