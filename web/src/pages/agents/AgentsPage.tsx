import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import type { AgentView, ProjectView } from '@modelgate/admin-api';
import { adminApi } from '../../api.js';
import { DataTable } from '../../components/DataTable.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { formatTime } from '../../format.js';

const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const column = createColumnHelper<AgentView>();
const COLUMNS = [
  column.accessor('slug', { header: 'Slug', cell: (cell) => <Link to={`/agents/${cell.getValue()}`}>{cell.getValue()}</Link> }),
  column.accessor('name', { header: 'Name' }),
  column.accessor('project_id', { header: 'Project' }),
  column.accessor('latest_draft', { header: 'Newest draft' }),
  column.accessor('published_version', { header: 'Live version', cell: (cell) => cell.getValue() ?? <span className="muted">not published</span> }),
  column.accessor('updated_at', { header: 'Changed', cell: (cell) => formatTime(cell.getValue()) }),
];

/** The agents, and a new one by slug (it is created by its first save in the editor). */
export function AgentsPage() {
  const [agents, setAgents] = useState<AgentView[] | null>(null);
  const [projects, setProjects] = useState<ProjectView[]>([]);
  const [slug, setSlug] = useState('');
  const [project, setProject] = useState('default');
  const [error, setError] = useState<string | null>(null);
  const navigate = useNavigate();

  useEffect(() => {
    adminApi.agents
      .list()
      .then((list) => setAgents(list.data))
      .catch((failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)));
    adminApi
      .projects()
      .then((list) => setProjects(list.data))
      .catch(() => undefined);
  }, []);

  const taken = agents?.some((agent) => agent.slug === slug) ?? false;
  const slugProblem = slug === '' ? null : !SLUG.test(slug) ? 'lowercase letters, digits, "_" and "-"' : taken ? 'an agent has this slug already' : null;
  return (
    <section aria-labelledby="agents-title">
      <div className="page-head">
        <h1 id="agents-title">Agents</h1>
      </div>
      <form
        className="filters"
        onSubmit={(event) => {
          event.preventDefault();
          if (slugProblem === null && slug !== '') navigate(`/agents/${slug}?project=${encodeURIComponent(project)}`);
        }}
      >
        <div className="field">
          <label htmlFor="new-agent-slug">New agent slug</label>
          <input id="new-agent-slug" value={slug} aria-invalid={slugProblem !== null} aria-describedby="new-agent-hint" onChange={(event) => setSlug(event.target.value)} />
          <span id="new-agent-hint" className={slugProblem === null ? 'hint' : 'hint error'}>
            {slugProblem ?? 'its run URL: /v1/agents/<slug>/runs'}
          </span>
        </div>
        <SelectField id="new-agent-project" label="Project" value={project} options={projects.map((entry) => ({ value: entry.id, label: entry.id }))} onChange={setProject} />
        <div className="field actions">
          <button type="submit" disabled={slug === '' || slugProblem !== null}>
            New agent
          </button>
        </div>
      </form>
      <ErrorAlert message={error} />
      <DataTable caption="Agents" columns={COLUMNS} rows={agents ?? []} rowKey={(agent) => agent.slug} empty={agents === null ? 'Loading…' : 'No agents yet.'} />
    </section>
  );
}
