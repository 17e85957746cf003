import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { TeamView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../../api.js';
import { ConfirmButton } from '../../components/ConfirmButton.js';
import { ErrorAlert } from '../../components/ErrorAlert';
import { CreateForm, InlineEditForm } from '../../components/RecordForms.js';
import { SelectField } from '../../components/SelectField';
import { formatUsd } from '../../format.js';
import { useSession } from '../../session.js';

/**
 * Teams and the projects they hold, with key counts and this month's spend (GET /admin/v1/teams
 * and /usage?by=team). Administrators create, rename and delete teams and move projects; a team
 * admin sees its own teams, read only (the gateway enforces the same).
 */

const TEAMS = ['teams'] as const;
const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));

/** The first day of the current UTC month: what "this month" of the spend column means. */
function monthStart(now = new Date()): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

function useRefreshTeams() {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: TEAMS });
    // A move changes which team a project's spend counts under.
    void client.invalidateQueries({ queryKey: ['usage', 'team'] });
  };
}

function CreateTeamForm() {
  const refresh = useRefreshTeams();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => adminApi.teams.create({ id: id.trim(), ...(name.trim() === '' ? {} : { name: name.trim() }) }),
    onSuccess: () => {
      setId('');
      setName('');
      refresh();
    },
  });
  return (
    <CreateForm titleId="create-team-title" title="New team" submitLabel="Create team" pending={create.isPending} error={create.error === null ? null : messageOf(create.error)} onSubmit={() => create.mutate()}>
      <div className="field">
        <label htmlFor="team-id">Id</label>
        <input id="team-id" required pattern="[a-z0-9][a-z0-9_\-]{0,63}" aria-describedby="team-id-hint" value={id} onChange={(event) => setId(event.target.value)} />
        <small id="team-id-hint" className="muted">
          lowercase letters, digits, _ and -
        </small>
      </div>
      <div className="field">
        <label htmlFor="team-name">Name</label>
        <input id="team-name" value={name} maxLength={200} placeholder="the id if empty" onChange={(event) => setName(event.target.value)} />
      </div>
    </CreateForm>
  );
}

function MoveProjectForm({ teams }: { teams: readonly TeamView[] }) {
  const refresh = useRefreshTeams();
  const projects = teams.flatMap((team) => team.projects.map((project) => ({ value: project.id, label: `${project.name} (in ${team.name})` })));
  const [project, setProject] = useState('');
  const [team, setTeam] = useState('');
  const chosenProject = project === '' ? (projects[0]?.value ?? '') : project;
  const chosenTeam = team === '' ? (teams[0]?.id ?? '') : team;
  const move = useMutation({ mutationFn: () => adminApi.moveProject(chosenProject, chosenTeam), onSuccess: refresh });
  if (projects.length === 0) return null;
  return (
    <form
      className="filters"
      aria-labelledby="move-project-title"
      onSubmit={(event) => {
        event.preventDefault();
        move.mutate();
      }}
    >
      <h2 id="move-project-title">Move a project</h2>
      <SelectField id="move-project" label="Project" value={chosenProject} options={projects} onChange={setProject} />
      <SelectField id="move-team" label="To team" value={chosenTeam} options={teams.map((entry) => ({ value: entry.id, label: entry.name }))} onChange={setTeam} />
      <div className="field actions">
        <button type="submit" disabled={move.isPending}>
          Move
        </button>
      </div>
      <ErrorAlert message={move.error === null ? null : messageOf(move.error)} />
      {move.isSuccess && (
        <p role="status" className="muted">
          Moved {move.data.id} to {teams.find((entry) => entry.id === move.data.team_id)?.name ?? move.data.team_id}.
        </p>
      )}
    </form>
  );
}

function TeamRow({ team, spend, manage }: { team: TeamView; spend: number | undefined; manage: boolean }) {
  const refresh = useRefreshTeams();
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(team.name);
  const [failure, setFailure] = useState<string | null>(null);
  const rename = useMutation({
    mutationFn: () => adminApi.teams.rename(team.id, name.trim()),
    onSuccess: () => {
      setRenaming(false);
      refresh();
    },
  });
  return (
    <tr data-team={team.id}>
      <th scope="row">
        {renaming ? (
          <InlineEditForm
            label={`Rename ${team.name}`}
            pending={rename.isPending}
            error={rename.error === null ? null : messageOf(rename.error)}
            onSubmit={() => rename.mutate()}
            onCancel={() => setRenaming(false)}
          >
            <label htmlFor={`rename-${team.id}`} className="visually-hidden">
              New name of {team.name}
            </label>
            <input id={`rename-${team.id}`} required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
          </InlineEditForm>
        ) : (
          <>
            {team.name} {team.name !== team.id && <span className="muted">({team.id})</span>}
          </>
        )}
      </th>
      <td>
        {team.projects.length === 0 ? (
          <span className="muted">no projects</span>
        ) : (
          <ul className="plain-list">
            {team.projects.map((project) => (
              <li key={project.id}>
                {project.name} <span className="muted">({project.key_count === 1 ? '1 key' : `${project.key_count} keys`})</span>
              </li>
            ))}
          </ul>
        )}
      </td>
      <td>{team.key_count}</td>
      <td>{spend === undefined ? '—' : formatUsd(spend)}</td>
      {manage && (
        <td className="row-actions">
          {!renaming && (
            <button type="button" className="secondary small" aria-label={`Rename ${team.name}`} onClick={() => setRenaming(true)}>
              Rename
            </button>
          )}
          {team.id !== 'default' && (
            <ConfirmButton
              label={`Delete ${team.name}`}
              title={`Delete the team ${team.name}?`}
              description={team.projects.length > 0 ? 'It still holds projects: move them to another team first, or the gateway refuses.' : 'It holds no projects. Team admins of it keep their accounts.'}
              confirmLabel="Delete"
              danger
              onConfirm={async () => {
                setFailure(null);
                await adminApi.teams.remove(team.id).then(refresh, (error: unknown) => setFailure(messageOf(error)));
              }}
            />
          )}
          <ErrorAlert message={failure} />
        </td>
      )}
    </tr>
  );
}

export function TeamsPage() {
  const { session } = useSession();
  const manage = session?.user.role === 'admin';
  const since = monthStart();
  const teams = useQuery({ queryKey: TEAMS, queryFn: adminApi.teams.list });
  const spend = useQuery({ queryKey: ['usage', 'team', since], queryFn: () => adminApi.usage('team', { since }) });
  const spendOf = new Map((spend.data?.data ?? []).map((row) => [row.team_id ?? null, row.cost_usd]));
  const list = teams.data?.data ?? [];
  return (
    <section aria-labelledby="teams-title">
      <div className="page-head">
        <h1 id="teams-title">Teams</h1>
      </div>
      <p className="muted">
        A team holds projects; a project holds keys and agents. {manage ? 'A team admin manages the keys, agents, log and usage of its teams only.' : 'You see the teams you manage.'}
      </p>
      <ErrorAlert message={teams.error === null ? null : messageOf(teams.error)} />
      <ErrorAlert message={spend.error === null ? null : `This month's spend could not be read: ${messageOf(spend.error)}`} />
      {manage && <CreateTeamForm />}
      <table>
        <caption>Teams, their projects and this month&apos;s spend (UTC, since {since})</caption>
        <thead>
          <tr>
            <th scope="col">Team</th>
            <th scope="col">Projects</th>
            <th scope="col">Keys</th>
            <th scope="col">Spend this month</th>
            {manage && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {teams.isPending && (
            <tr>
              <td colSpan={manage ? 5 : 4} className="muted">
                Loading…
              </td>
            </tr>
          )}
          {list.map((team) => (
            <TeamRow key={team.id} team={team} spend={spend.data === undefined ? undefined : (spendOf.get(team.id) ?? 0)} manage={manage} />
          ))}
        </tbody>
      </table>
      {manage && <MoveProjectForm teams={list} />}
    </section>
  );
}
