import { createColumnHelper } from '@tanstack/react-table';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import type { ApiKeyView, KeySpendView, ListPage, ProjectView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { ConfirmButton } from '../components/ConfirmButton.js';
import { DataTable } from '../components/DataTable.js';
import { Pager } from '../components/Pager.js';
import { useCursorPages } from '../components/useCursorPages.js';
import { formatCount, formatUsd, paramsOf } from '../format.js';
import { ClearCacheButton } from './ClearCacheButton.js';
import { CreateKeyDialog } from './CreateKeyDialog.js';
import { EditKeyDialog } from './EditKeyDialog.js';
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
  const filterKey = JSON.stringify(filter);
  const pages = useCursorPages(filterKey);
  const [page, setPage] = useState<ListPage<ApiKeyView> | null>(null);
  const [spend, setSpend] = useState<Map<string, KeySpendView>>(new Map());
  const [projects, setProjects] = useState<ProjectView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<ApiKeyView | null>(null);
  const [rotating, setRotating] = useState<ApiKeyView | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [searchText, setSearchText] = useState(filter.q ?? '');
  const [reloads, setReloads] = useState(0);
  const reload = useCallback(() => setReloads((count) => count + 1), []);

  useEffect(() => {
    adminApi
      .projects()
      .then((list) => setProjects(list.data))
      .catch(() => undefined);
  }, []);

  useEffect(() => {
    let current = true;
    setError(null);
    adminApi.keys
      .page(JSON.parse(filterKey) as typeof filter, pages.cursor, PAGE_SIZE)
      .then(async (result) => {
        if (!current) return;
        setPage(result);
        if (result.data.length === 0) return;
        const spent = await adminApi.keys.spend(result.data.map((key) => key.id));
        if (current) setSpend(new Map(spent.data.map((entry) => [entry.key_id, entry])));
      })
      .catch((failure: unknown) => current && setError(failure instanceof ApiError ? failure.message : String(failure)));
    return () => {
      current = false;
    };
  }, [filterKey, pages.cursor, reloads]);

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

  const actOnProject = useCallback(
    async (project: string, action: 'pause' | 'resume' | 'revoke') => {
      setNotice(null);
      try {
        const changed = await adminApi.keys.actOnProject(project, action);
        const done = { pause: 'paused', resume: 'resumed', revoke: 'revoked' }[action];
        setNotice(`${changed.data.length} ${changed.data.length === 1 ? 'key' : 'keys'} of ${project} ${done}.`);
        reload();
      } catch (failure) {
        setError(failure instanceof ApiError ? failure.message : String(failure));
      }
    },
    [reload],
  );

  const act = useCallback(
    async (key: ApiKeyView, action: 'pause' | 'resume' | 'revoke') => {
      try {
        await adminApi.keys.act(key.id, action);
        reload();
      } catch (failure) {
        setError(failure instanceof ApiError ? failure.message : String(failure));
      }
    },
    [reload],
  );

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
        cell: (info) => <SpendCell used={spend.get(info.row.original.id)?.today.tokens} cap={info.row.original.limits.daily_tokens} unit="tokens" />,
      }),
      column.display({
        id: 'month',
        header: 'Cost this month',
        cell: (info) => <SpendCell used={spend.get(info.row.original.id)?.month.cost_usd} cap={info.row.original.limits.monthly_cost_usd} unit="usd" />,
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
                  onConfirm={() => act(key, 'pause')}
                />
              ) : (
                <ConfirmButton
                  label="Resume"
                  title={`Resume ${key.name}?`}
                  description={<p>Calls with this key work again.</p>}
                  confirmLabel="Resume key"
                  onConfirm={() => act(key, 'resume')}
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
                onConfirm={() => act(key, 'revoke')}
              />
            </div>
          );
        },
      }),
    ];
  }, [spend, act]);

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
          options={[{ value: '', label: 'All projects' }, ...projects.map((project) => ({ value: project.id, label: project.id }))]}
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
            onConfirm={() => actOnProject(filter.project!, 'pause')}
          />
          <ConfirmButton
            label="Resume all"
            title={`Resume every paused key of ${filter.project}?`}
            description={<p>Every paused key of the project works again.</p>}
            confirmLabel="Resume keys"
            onConfirm={() => actOnProject(filter.project!, 'resume')}
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
            onConfirm={() => actOnProject(filter.project!, 'revoke')}
          />
        </div>
      )}
      {notice !== null && (
        <p role="status" className="notice">
          {notice}
        </p>
      )}
      <ErrorAlert message={error} />
      <DataTable caption="Keys, newest first" columns={columns} rows={page?.data ?? []} rowKey={(key) => key.id} empty={page === null ? 'Loading…' : 'No keys match.'} />
      <Pager page={pages.page} hasPrevious={pages.page > 1} hasMore={page?.has_more ?? false} onPrevious={pages.previous} onNext={() => pages.next(page?.next_cursor ?? null)} />
      <CreateKeyDialog
        open={creating}
        onOpenChange={(open) => {
          setCreating(open);
          if (!open) reload();
        }}
        projects={projects}
      />
      {rotating !== null && (
        <RotateKeyDialog
          apiKey={rotating}
          onClose={(changed) => {
            setRotating(null);
            if (changed) reload();
          }}
        />
      )}
      {editing !== null && (
        <EditKeyDialog
          apiKey={editing}
          onClose={(changed) => {
            setEditing(null);
            if (changed) reload();
          }}
        />
      )}
    </section>
  );
}
