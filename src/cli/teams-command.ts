import type { Command } from 'commander';
import type { ProjectView, TeamView } from '../admin-api/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { printJson, printTable, printText } from './output.js';

/** `modelgate teams …` and `modelgate projects move`: a client of the admin API's team routes (docs/cli.md#teams). */

function printTeams(teams: readonly TeamView[]): void {
  printTable(
    ['id', 'name', 'projects', 'keys', 'created'],
    teams.map((team) => [team.id, team.name, team.projects.map((project) => project.id).join(', ') || '-', String(team.key_count), team.created_at]),
  );
}

const segment = (id: string) => encodeURIComponent(id);

export function registerTeamsCommand(program: Command): void {
  const teams = program.command('teams').description('teams, which hold projects: list, create, rename, delete');

  withAdminOptions(teams.command('list').description('list teams with their projects and key counts')).action(async (options: AdminOptions) => {
    const list = await AdminClient.fromOptions(options).request<{ data: TeamView[] }>('GET', '/teams');
    if (options.json === true) printJson(list);
    else printTeams(list.data);
  });

  withAdminOptions(teams.command('create <id>').description('create a team (id: lowercase letters, digits, _ and -)'))
    .option('--name <name>', 'its name (default: the id)')
    .action(async (id: string, options: AdminOptions & { name?: string }) => {
      const team = await AdminClient.fromOptions(options).request<TeamView>('POST', '/teams', { id, ...(options.name !== undefined ? { name: options.name } : {}) });
      if (options.json === true) printJson(team);
      else printText(`Created team ${team.id} (${team.name})\n`);
    });

  withAdminOptions(teams.command('rename <id> <name>').description('rename a team (its id stays)')).action(async (id: string, name: string, options: AdminOptions) => {
    const team = await AdminClient.fromOptions(options).request<TeamView>('PATCH', `/teams/${segment(id)}`, { name });
    if (options.json === true) printJson(team);
    else printText(`Renamed team ${team.id} to ${team.name}\n`);
  });

  withAdminOptions(teams.command('delete <id>').description('delete a team that holds no projects (move them first; never default)')).action(async (id: string, options: AdminOptions) => {
    await AdminClient.fromOptions(options).request<void>('DELETE', `/teams/${segment(id)}`);
    if (options.json === true) printJson({ id, deleted: true });
    else printText(`Deleted team ${id}\n`);
  });

  const projects = program.command('projects').description("projects, which hold keys and agents: move one to another team");
  withAdminOptions(projects.command('move <project>').description('move a project (its keys, agents and records) to another team'))
    .requiredOption('--team <id>', 'the team to move it to')
    .action(async (project: string, options: AdminOptions & { team: string }) => {
      const moved = await AdminClient.fromOptions(options).request<ProjectView>('PATCH', `/projects/${segment(project)}`, { team_id: options.team });
      if (options.json === true) printJson(moved);
      else printText(`Moved project ${moved.id} to team ${moved.team_id}\n`);
    });
}
