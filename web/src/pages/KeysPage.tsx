import { useMutation, useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { DataTable } from '../components/DataTable.js';
import { Pager } from '../components/Pager.js';
import { usePagedQuery } from '../components/usePagedQuery.js';
import { formatCount, formatUsd, paramsOf } from '../format.js';
import { ClearCacheButton } from './ClearCacheButton.js';
import { CreateKeyDialog } from './CreateKeyDialog.js';
import { EditKeyDialog } from './EditKeyDialog.js';
import { KEYS, useRefreshKeys } from './key-queries.js';
import { RotateKeyDialog } from './RotateKeyDialog.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { SelectField } from '../components/SelectField';

const PAGE_SIZE = 50;
const FILTERS = ['q', 'project', 'status'] as const;
const KEY_STATES = [
  { value: '', label: 'Any state' },
  { value: 'active', label: 'active' },
  { value: 'paused', label: 'paused' },
  { value: 'revoked', label: 'revoked' },
];
type KeyAction = 'pause' | 'resume' | 'revoke';
const DONE: Record<KeyAction, string> = { pause: 'paused', resume: 'resumed', revoke: 'revoked' };
const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));
/** A confirmed action for ConfirmButton, which closes either way: a refusal is shown by the page, from the mutation's error. */
const settled = (action: Promise<unknown>) => action.then(() => undefined, () => undefined);

function SpendCell({ used, cap, unit }: { used: number | undefined; cap: number | null; unit: 'tokens' | 'usd' }) {
  if (used === undefined) return <span className="muted">…</span>;
  const text = unit === 'usd' ? formatUsd(used) : formatCount(used);
  if (cap === null) return <span>{text}</span>;
  const share = Math.min(1, used / cap);
  const capText = unit === 'usd' ? formatUsd(cap) : formatCount(cap);
  return (
    <span className="spend">
      {text} <span className="muted">of {capText}</span>
      <meter min={0} max={1} value={share} high={0.8} optimum={0} aria-label={`${Math.round(share * 100)}% of the cap`} />
    </span>
  );
}

export function KeysPage() {
  const [search, setSearch] = useSearchParams();
  const filter = paramsOf(search, FILTERS);
  const pages = usePagedQuery([...KEYS, 'page'], filter, (shown, cursor) => adminApi.keys.page(shown, cursor, PAGE_SIZE));
  const page = pages.query.data;
  const ids = page?.data.map((key) => key.id) ?? [];
  const spend = useQuery({ queryKey: [...KEYS, 'spend', ids], queryFn: () => adminApi.keys.spend(ids), enabled: ids.length > 0 });
  const spendOf = useMemo(() => new Map((spend.data?.data ?? []).map((entry) => [entry.key_id, entry])), [spend.data]);
  const projects = useQuery({ queryKey: ['projects'], queryFn: adminApi.projects });
  const refresh = useRefreshKeys();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ApiKeyView | null>(null);
  const [rotating, setRotating] = useState<ApiKeyView | null>(null);
  const [searchText, setSearchText] = useState(filter.q ?? '');

  const { mutateAsync: actOnKey, error: keyActionError } = useMutation({
    mutationFn: ({ key, action }: { key: ApiKeyView; action: KeyAction }) => adminApi.keys.act(key.id, action),
    onSuccess: refresh,
  });
  const projectAction = useMutation({
    mutationFn: ({ project, action }: { project: string; action: KeyAction }) => adminApi.keys.actOnProject(project, action),
    onSuccess: refresh,
  });
  const failure = pages.query.error ?? keyActionError ?? projectAction.error;

  // The search box updates the URL a moment after typing stops, not at every key.
  useEffect(() => {
    const timer = setTimeout(() => {
      if ((filter.q ?? '') !== searchText) setFilter('q', searchText);
    }, 300);
    return () => clearTimeout(timer);
  }, [searchText]);

  function setFilter(name: (typeof FILTERS)[number], value: string) {
    const next = new URLSearchParams(search);
    if (value === '') next.delete(name);
    else next.set(name, value);
    setSearch(next, { replace: true });
  }

  const columns = useMemo(() => {
    const column = createColumnHelper<ApiKeyView>();
    return [
      column.accessor('name', {
        header: 'Name',
        cell: (info) => (
          <span>
            <strong>{info.getValue()}</strong>
            <br />
            <code className="muted">{info.row.original.fingerprint}</code>
          </span>
        ),
      }),
      column.accessor('project_id', { header: 'Project' }),
      column.accessor('expires_at', {
        header: 'Expires',
        cell: (info) => {
          const expiresAt = info.getValue();
          if (expiresAt === null) return <span className="muted">never</span>;
          const passed = new Date(expiresAt).getTime() <= Date.now();
          return <time dateTime={expiresAt} className={passed ? 'error' : undefined}>{`${passed ? 'expired ' : ''}${new Date(expiresAt).toLocaleString()}`}</time>;
        },
      }),
      column.accessor('status', { header: 'State', cell: (info) => <span className={`badge ${info.getValue()}`}>{info.getValue()}</span> }),
      column.accessor('scopes', { header: 'Scopes', cell: (info) => info.getValue().join(', ') }),
      column.display({
        id: 'today',
        header: 'Tokens today',
        cell: (info) => <SpendCell used={spendOf.get(info.row.original.id)?.today.tokens} cap={info.row.original.limits.daily_tokens} unit="tokens" />,
      }),
      column.display({
        id: 'month',
        header: 'Cost this month',
        cell: (info) => <SpendCell used={spendOf.get(info.row.original.id)?.month.cost_usd} cap={info.row.original.limits.monthly_cost_usd} unit="usd" />,
      }),
      column.display({
        id: 'rpm',
        header: 'Per minute',
        cell: (info) => formatCount(info.row.original.limits.rpm),
      }),
      column.display({
        id: 'actions',
        header: 'Actions',
        cell: (info) => {
          const key = info.row.original;
          if (key.status === 'revoked') return <span className="muted">revoked (final)</span>;
          return (
            <div className="row-actions">
              <button type="button" className="secondary small" onClick={() => setEditing(key)} aria-label={`Edit ${key.name}`}>
                Edit
              </button>
              <button type="button" className="secondary small" onClick={() => setRotating(key)} aria-label={`Rotate ${key.name}`}>
                Rotate
              </button>
              {key.status === 'active' ? (
                <ConfirmButton
                  label="Pause"
                  title={`Pause ${key.name}?`}
                  description={<p>Calls with this key are refused (403 key_paused) on every instance within about a second, until it is resumed.</p>}
                  confirmLabel="Pause key"
                  onConfirm={() => settled(actOnKey({ key, action: 'pause' }))}
                />
              ) : (
                <ConfirmButton
                  label="Resume"
                  title={`Resume ${key.name}?`}
                  description={<p>Calls with this key work again.</p>}
                  confirmLabel="Resume key"
                  onConfirm={() => settled(actOnKey({ key, action: 'resume' }))}
                />
              )}
              <ConfirmButton
                label="Revoke"
                danger
                title={`Revoke ${key.name}?`}
                description={
                  <p>
                    <strong>This is final.</strong> A revoked key never works again and cannot be resumed; its clients need a new key.
                  </p>
                }
                confirmLabel="Revoke for good"
                onConfirm={() => settled(actOnKey({ key, action: 'revoke' }))}
              />
            </div>
          );
        },
      }),
    ];
  }, [spendOf, actOnKey]);

  return (
    <section aria-labelledby="keys-title">
      <div className="page-head">
        <h1 id="keys-title">Keys</h1>
        <button type="button" onClick={() => setCreating(true)}>
          Create key
        </button>
      </div>
      <form className="filters" role="search" aria-label="Filter keys" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor="key-search">Search</label>
          <input id="key-search" type="search" placeholder="name or id" value={searchText} onChange={(event) => setSearchText(event.target.value)} />
        </div>
        <SelectField
          id="key-project"
          label="Project"
          value={filter.project ?? ''}
          options={[{ value: '', label: 'All projects' }, ...(projects.data?.data ?? []).map((project) => ({ value: project.id, label: project.id }))]}
          onChange={(value) => setFilter('project', value)}
        />
        <SelectField id="key-state" label="State" value={filter.status ?? ''} options={KEY_STATES} onChange={(value) => setFilter('status', value)} />
        {filter.project !== undefined && <ClearCacheButton key={filter.project} project={filter.project} />}
      </form>
      {filter.project !== undefined && (
        <div className="row-actions project-actions" role="group" aria-label={`Every key of ${filter.project}`}>
          <span className="muted">Every key of {filter.project}:</span>
          <ConfirmButton
            label="Pause all"
            title={`Pause every key of ${filter.project}?`}
            description={<p>Every active key of the project is refused (403 key_paused) on every instance within about a second, until resumed.</p>}
            confirmLabel="Pause keys"
            onConfirm={() => settled(projectAction.mutateAsync({ project: filter.project!, action: 'pause' }))}
          />
          <ConfirmButton
            label="Resume all"
            title={`Resume every paused key of ${filter.project}?`}
            description={<p>Every paused key of the project works again.</p>}
            confirmLabel="Resume keys"
            onConfirm={() => settled(projectAction.mutateAsync({ project: filter.project!, action: 'resume' }))}
          />
          <ConfirmButton
            label="Revoke all"
            danger
            title={`Revoke every key of ${filter.project}?`}
            description={
              <p>
                <strong>This is final.</strong> No key of the project works again; their clients need new keys.
              </p>
            }
            confirmLabel="Revoke for good"
            onConfirm={() => settled(projectAction.mutateAsync({ project: filter.project!, action: 'revoke' }))}
          />
        </div>
      )}
      {projectAction.isSuccess && (
        <p role="status" className="notice">
          {projectAction.data.data.length} {projectAction.data.data.length === 1 ? 'key' : 'keys'} of {projectAction.variables.project} {DONE[projectAction.variables.action]}.
        </p>
      )}
      <ErrorAlert message={failure === null ? null : messageOf(failure)} />
      <div aria-busy={pages.stale}>
        <DataTable
          caption="Keys, newest first"
          columns={columns}
          rows={page?.data ?? []}
          rowKey={(key) => key.id}
          empty={page !== undefined ? 'No keys match.' : pages.query.isPending ? 'Loading…' : undefined}
        />
      </div>
      <Pager page={pages.page} hasPrevious={pages.hasPrevious} hasMore={pages.hasMore} onPrevious={pages.previous} onNext={pages.next} />
      <CreateKeyDialog open={creating} onOpenChange={setCreating} projects={projects.data?.data ?? []} />
      {rotating !== null && <RotateKeyDialog apiKey={rotating} onClose={() => setRotating(null)} />}
      {editing !== null && <EditKeyDialog apiKey={editing} onClose={() => setEditing(null)} />}
    </section>
  );
}
