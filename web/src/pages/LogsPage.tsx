import { useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import type { LogSummaryView } from '@modelgate/admin-api';
import { adminApi, ApiError, type LogFilter } from '../api.js';
import { DataTable } from '../components/DataTable.js';
import { Pager } from '../components/Pager.js';
import { usePagedQuery } from '../components/usePagedQuery.js';
import { formatCount, formatTime, formatUsd, paramsOf } from '../format.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { SelectField } from '../components/SelectField';

const PAGE_SIZE = 50;
const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));
const FILTERS = ['since', 'until', 'key', 'key_name', 'model', 'status', 'endpoint', 'platform'] as const;
/** What the gateway's key ids look like: anything else typed in the key field is a key's name. */
const KEY_ID = /^key_[0-9a-f]{8,64}$/;
const STATUS_CLASSES = [
  { value: '', label: 'Any' },
  { value: 'success', label: 'Success' },
  { value: 'error', label: 'Error' },
  { value: '2xx', label: '2xx' },
  { value: '4xx', label: '4xx' },
  { value: '429', label: '429' },
  { value: '5xx', label: '5xx' },
];

/**
 * A cell whose text may break anywhere: long model ids, error codes and platforms wrap so
 * that every column, Latency the last, fits a laptop's screen without sideways scrolling.
 */
function Wrapping({ text }: { text: string }) {
  return <span className="cell-wrap">{text}</span>;
}

export function LogsPage() {
  const [search, setSearch] = useSearchParams();
  const filter: LogFilter = paramsOf(search, FILTERS);
  const filterKey = JSON.stringify(filter);
  const pages = usePagedQuery(['logs'], filter, (shown, cursor) => adminApi.logs.page(shown, cursor, PAGE_SIZE));
  const page = pages.query.data;
  const [draft, setDraft] = useState<LogFilter>(filter);
  // The model endpoints the gateway serves (every public format's), as the request log names them.
  const endpoints = useQuery({ queryKey: ['endpoints'], queryFn: adminApi.endpoints, staleTime: Infinity });

  useEffect(() => setDraft(JSON.parse(filterKey) as LogFilter), [filterKey]);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of FILTERS) {
      if (name === 'key' || name === 'key_name') continue;
      const value = draft[name]?.trim();
      if (value !== undefined && value !== '') next.set(name, value);
    }
    // One field for a key: its id, or a name as the keys page shows it.
    const key = (draft.key ?? draft.key_name)?.trim();
    if (key !== undefined && key !== '') next.set(KEY_ID.test(key) ? 'key' : 'key_name', key);
    setSearch(next);
  };

  const columns = useMemo(() => {
    const column = createColumnHelper<LogSummaryView>();
    return [
      column.accessor('created_at', {
        header: 'Time (UTC)',
        cell: (info) => <Link to={`/logs/${info.row.original.request_id}`}>{formatTime(info.getValue())}</Link>,
      }),
      column.accessor('status', {
        header: 'Status',
        cell: (info) => (
          <span className={info.getValue() >= 400 ? 'badge revoked cell-wrap' : 'badge active'}>
            {info.getValue()}
            {info.row.original.error_code !== null ? ` ${info.row.original.error_code}` : ''}
          </span>
        ),
      }),
      column.accessor('endpoint', { header: 'Endpoint', cell: (info) => <Wrapping text={info.getValue()} /> }),
      column.accessor('requested_model', {
        header: 'Model',
        cell: (info) => <Wrapping text={info.row.original.agent !== null ? `agent ${info.row.original.agent}` : (info.getValue() ?? '—')} />,
      }),
      column.accessor('key_id', {
        header: 'Key',
        // The key's name; its fingerprint (id and last characters) beside it tells keys of one name apart.
        cell: (info) => {
          const { key_name: name, fingerprint } = info.row.original;
          if (name === null || name === undefined) return <code className="cell-wrap">{fingerprint ?? '—'}</code>;
          return (
            <span className="cell-wrap" title={fingerprint ?? undefined}>
              {name}
            </span>
          );
        },
      }),
      column.accessor('platform', { header: 'Platform', cell: (info) => <Wrapping text={info.getValue() ?? '—'} /> }),
      column.display({ id: 'tokens', header: 'Tokens', cell: (info) => formatCount(info.row.original.usage?.total_tokens) }),
      column.accessor('cost_usd', { header: 'Cost', cell: (info) => formatUsd(info.getValue()) }),
      column.accessor('latency_ms', { header: 'Latency', cell: (info) => `${formatCount(info.getValue())} ms` }),
    ];
  }, []);

  const field = (name: (typeof FILTERS)[number], label: string, placeholder: string) => (
    <div className="field">
      <label htmlFor={`log-${name}`}>{label}</label>
      <input id={`log-${name}`} placeholder={placeholder} value={draft[name] ?? ''} onChange={(event) => setDraft({ ...draft, [name]: event.target.value })} />
    </div>
  );

  return (
    <section aria-labelledby="logs-title">
      <div className="page-head">
        <h1 id="logs-title">Request log</h1>
        <div className="row-actions">
          <a className="button secondary" href={adminApi.logs.exportUrl(filter, 'jsonl')} download>
            Export JSONL
          </a>
          <a className="button secondary" href={adminApi.logs.exportUrl(filter, 'csv')} download>
            Export CSV
          </a>
        </div>
      </div>
      <form className="filters" role="search" aria-label="Filter the request log" onSubmit={apply}>
        {field('since', 'Since', '24h, 7d or 2025-05-01')}
        {field('until', 'Until', 'empty = now')}
        <div className="field">
          <label htmlFor="log-key">Key</label>
          <input
            id="log-key"
            placeholder="a key's name or id"
            value={draft.key ?? draft.key_name ?? ''}
            onChange={(event) => setDraft({ ...draft, key: undefined, key_name: event.target.value })}
          />
        </div>
        {field('model', 'Model', 'gpt-4o')}
        <SelectField id="log-status" label="Status" value={draft.status ?? ''} options={STATUS_CLASSES} onChange={(status) => setDraft({ ...draft, status })} />
        <SelectField
          id="log-endpoint"
          label="Endpoint"
          value={draft.endpoint ?? ''}
          options={[{ value: '', label: 'Any' }, ...(endpoints.data?.data ?? []).map((endpoint) => ({ value: endpoint, label: endpoint }))]}
          onChange={(endpoint) => setDraft({ ...draft, endpoint })}
        />
        {field('platform', 'Platform', 'X-Platform-ID')}
        <div className="field actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      {/* The error replaces the results: the rows of the previous filter would read as this one's. */}
      <ErrorAlert message={pages.query.error === null ? null : messageOf(pages.query.error)} />
      {pages.query.error === null && (
        <div aria-busy={pages.stale}>
          <DataTable caption="Request log, newest first" columns={columns} rows={page?.data ?? []} rowKey={(row) => row.request_id} empty={page === undefined ? 'Loading…' : 'No requests match.'} />
        </div>
      )}
      <Pager page={pages.page} hasPrevious={pages.hasPrevious} hasMore={pages.hasMore} onPrevious={pages.previous} onNext={pages.next} />
    </section>
  );
}
