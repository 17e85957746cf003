import { Type } from '@sinclair/typebox';
import { GatewayError } from '../../errors/index.js';
import { PROJECT_ID_PATTERN, toTeamView, type TeamRow } from '../../keys/index.js';
import { TEAM_ADMIN_MAY_CALL } from '../admin-auth.js';
import type { RouteModule } from '../app.js';
import { recordChange } from '../audit-trail.js';
import { ADMIN_SCHEMA, registerAdminRoutes, visibleTeams } from './admin-scope.js';
import { listOf } from './schema-helpers.js';

/**
 * Teams through the admin API (docs/admin-api.md#teams): list, show, create, rename, delete.
 * A `team_admin` session reads its own teams only (another team answers 404, as an unknown
 * one); changes need an administrator. A project moves with PATCH /admin/v1/projects/{id}.
 */

// Team ids are what project ids are: they appear in URLs, flags and role mappings.
const TeamIdSchema = Type.String({ pattern: PROJECT_ID_PATTERN, description: 'lowercase letters, digits, "_" and "-"' });
const NameSchema = Type.String({ minLength: 1, maxLength: 200 });
const TeamParams = Type.Object({ id: TeamIdSchema });

const TeamView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  projects: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), key_count: Type.Integer({ description: 'keys not revoked' }) })),
  key_count: Type.Integer({ description: "keys not revoked, over the team's projects" }),
  created_at: Type.String(),
});

const CreateTeamBody = Type.Object({ id: TeamIdSchema, name: Type.Optional(NameSchema) }, { additionalProperties: false });
const RenameTeamBody = Type.Object({ name: NameSchema }, { additionalProperties: false });

/** What the audit log keeps of a team: the row, not the counts that change under it. */
function auditedTeam(row: TeamRow) {
  return { id: row.id, name: row.name };
}

export const adminTeamsRoutes: RouteModule = async (app, context) => {
  const { teams } = context.keys;
  const { audit } = context;
  const noTeam = (id: string) => new GatewayError('not_found', `There is no team "${id}". GET /admin/v1/teams lists them.`);

  const summaryOf = async (id: string, visible: readonly string[] | null) => {
    if (visible !== null && !visible.includes(id)) throw noTeam(id);
    const [summary] = await teams.summaries([id]);
    if (summary === undefined) throw noTeam(id);
    return summary;
  };

  await registerAdminRoutes(app, context, (admin) => {
    admin.get(
      '/teams',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: "List teams with their projects and key counts (a team admin's: its own)", response: { 200: listOf(TeamView) } } },
      async (request) => ({ object: 'list' as const, data: (await teams.summaries(visibleTeams(request))).map(toTeamView) }),
    );

    admin.get(
      '/teams/:id',
      { config: TEAM_ADMIN_MAY_CALL, schema: { ...ADMIN_SCHEMA, summary: 'Show a team with its projects and key counts', params: TeamParams, response: { 200: TeamView } } },
      async (request) => toTeamView(await summaryOf(request.params.id, visibleTeams(request))),
    );

    admin.post(
      '/teams',
      { schema: { ...ADMIN_SCHEMA, summary: 'Create a team', body: CreateTeamBody, response: { 201: TeamView } } },
      async (request, reply) => {
        const row = await teams.create(request.body.id, request.body.name);
        request.log.info({ teamId: row.id }, 'admin: team created');
        await recordChange(audit, request, { action: 'team.create', target: { type: 'team', id: row.id }, after: auditedTeam(row) });
        reply.code(201);
        return toTeamView({ row, projects: [] });
      },
    );

    admin.patch(
      '/teams/:id',
      { schema: { ...ADMIN_SCHEMA, summary: 'Rename a team (its id stays)', params: TeamParams, body: RenameTeamBody, response: { 200: TeamView } } },
      async (request) => {
        const before = await teams.get(request.params.id);
        const row = await teams.rename(before.id, request.body.name);
        request.log.info({ teamId: row.id }, 'admin: team renamed');
        await recordChange(audit, request, { action: 'team.rename', target: { type: 'team', id: row.id }, before: auditedTeam(before), after: auditedTeam(row) });
        return toTeamView(await summaryOf(row.id, null));
      },
    );

    admin.delete(
      '/teams/:id',
      { schema: { ...ADMIN_SCHEMA, summary: 'Delete a team that holds no projects (never `default`)', params: TeamParams } },
      async (request, reply) => {
        const row = await teams.delete(request.params.id);
        request.log.info({ teamId: row.id }, 'admin: team deleted');
        await recordChange(audit, request, { action: 'team.delete', target: { type: 'team', id: row.id }, before: auditedTeam(row) });
        return reply.code(204).send();
      },
    );
  });
};
