import { useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import type { AgentView } from '@modelgate/admin-api';
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
  const list = useQuery({ queryKey: ['agents'], queryFn: adminApi.agents.list });
  const projects = useQuery({ queryKey: ['projects'], queryFn: adminApi.projects });
  const [slug, setSlug] = useState('');
  const [project, setProject] = useState('default');
  const navigate = useNavigate();

  const agents = list.data?.data;
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
        <SelectField id="new-agent-project" label="Project" value={project} options={(projects.data?.data ?? []).map((entry) => ({ value: entry.id, label: entry.id }))} onChange={setProject} />
        <div className="field actions">
          <button type="submit" disabled={slug === '' || slugProblem !== null}>
            New agent
          </button>
        </div>
      </form>
      <ErrorAlert message={list.error?.message ?? null} />
      <DataTable caption="Agents" columns={COLUMNS} rows={agents ?? []} rowKey={(agent) => agent.slug} empty={agents !== undefined ? 'No agents yet.' : list.isPending ? 'Loading…' : undefined} />
    </section>
  );
}
