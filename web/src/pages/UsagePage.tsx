import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { useSearchParams } from 'react-router-dom';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { UsageGrouping, UsageList, UsageView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { formatCount, formatUsd } from '../format.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { SelectField } from '../components/SelectField';

/**
 * Requests, tokens and cost per day, model, key, project, team, agent or key tag, from GET /admin/v1/usage: the numbers
 * `modelgate usage --json` prints for the same period. Period, grouping and metric live in
 * the URL, so a view can be shared as a link.
 */

const GROUPINGS: { value: UsageGrouping; label: string }[] = [
  { value: 'day', label: 'Day' },
  { value: 'model', label: 'Model or MCP tool' },
  { value: 'key', label: 'Key' },
  { value: 'project', label: 'Project' },
  { value: 'team', label: 'Team' },
  { value: 'agent', label: 'Agent' },
  { value: 'tag', label: 'Key tag' },
  { value: 'end_user', label: 'End user' },
];
const METRICS = [
  { value: 'requests', label: 'Requests' },
  { value: 'total_tokens', label: 'Tokens' },
  { value: 'cost_usd', label: 'Cost (USD)' },
] as const;
type Metric = (typeof METRICS)[number]['value'];
const PERIODS = [
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
];

function groupOf(by: UsageGrouping, row: UsageView): string {
  if (by === 'day') return row.day ?? '—';
  if (by === 'model') return row.model ?? '(none)';
  if (by === 'project') return row.project_id ?? '(no project)';
  if (by === 'team') return row.team_id === null || row.team_id === undefined ? '(no team)' : (row.team_name ?? row.team_id);
  if (by === 'agent') return row.agent ?? '(not an agent run)';
  if (by === 'tag') return row.tag ?? '(untagged)';
  if (by === 'end_user') return row.end_user ?? '(no end user)';
  // A key by its name: ids mean nothing to a reader (a key deleted since keeps its id).
  return row.key_id === null || row.key_id === undefined ? '(no key)' : (row.key_name ?? row.key_id);
}

/** A chart label of at most 24 characters. */
const shortLabel = (label: string) => (label.length > 24 ? `${label.slice(0, 23)}…` : label);

const CSV_COLUMNS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd', 'unpriced_requests'] as const;

function csvOf(by: UsageGrouping, rows: UsageView[]): string {
  const quote = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  const lines = [[by, ...CSV_COLUMNS].join(','), ...rows.map((row) => [quote(groupOf(by, row)), ...CSV_COLUMNS.map((column) => String(row[column]))].join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

export function UsagePage() {
  const [search, setSearch] = useSearchParams();
  const by = (GROUPINGS.find((grouping) => grouping.value === search.get('by'))?.value ?? 'day') as UsageGrouping;
  const metric = (METRICS.find((entry) => entry.value === search.get('metric'))?.value ?? 'cost_usd') as Metric;
  const since = search.get('since') ?? '30d';
  const until = search.get('until') ?? undefined;
  const query = useQuery({ queryKey: ['usage', by, since, until], queryFn: () => adminApi.usage(by, { since, until }) });
  // The error takes the place of the numbers: neither "Loading…" nor another period's numbers stay beside it.
  const error = query.error === null ? null : query.error instanceof ApiError ? query.error.message : String(query.error);
  const usage: UsageList<UsageView> | null = error === null ? (query.data ?? null) : null;

  const set = (name: string, value: string) => {
    const next = new URLSearchParams(search);
    next.set(name, value);
    setSearch(next, { replace: true });
  };

  const rows = usage?.data ?? [];
  const chartData = useMemo(() => rows.map((row) => ({ group: groupOf(by, row), value: row[metric] })), [rows, by, metric]);
  const csvHref = useMemo(() => URL.createObjectURL(new Blob([csvOf(by, rows)], { type: 'text/csv' })), [by, rows]);
  useEffect(() => () => URL.revokeObjectURL(csvHref), [csvHref]);
  const metricLabel = METRICS.find((entry) => entry.value === metric)!.label;

  return (
    <section aria-labelledby="usage-title">
      <div className="page-head">
        <h1 id="usage-title">Usage</h1>
        <a className="button secondary" href={csvHref} download={`modelgate-usage-by-${by}.csv`}>
          Export CSV
        </a>
      </div>
      <form className="filters" aria-label="Usage period and grouping" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor="usage-period">Period</label>
          <select id="usage-period" value={since} onChange={(event) => set('since', event.target.value)}>
            {PERIODS.some((period) => period.value === since) ? null : <option value={since}>since {since}</option>}
            {PERIODS.map((period) => (
              <option key={period.value} value={period.value}>
                {period.label}
              </option>
            ))}
          </select>
        </div>
        <SelectField id="usage-by" label="Group by" value={by} options={GROUPINGS} onChange={(value) => set('by', value)} />
        <SelectField id="usage-metric" label="Chart" value={metric} options={METRICS} onChange={(value) => set('metric', value)} />
      </form>
      <ErrorAlert message={error} />
      {by === 'tag' && <p className="muted">A key with several tags counts under each of them, so the totals over tags can exceed the period&apos;s.</p>}
      {error === null && (
      <figure className="chart" aria-label={`${metricLabel} per ${by}`}>
        {rows.length === 0 ? (
          <p className="muted">{usage === null ? 'Loading…' : 'No requests in this period.'}</p>
        ) : (
          <ResponsiveContainer width="100%" height={280}>
            <BarChart data={chartData} margin={{ top: 8, right: 8, bottom: 8, left: 48 }}>
              <CartesianGrid strokeDasharray="3 3" />
              {/* Every label, slanted and shortened so none is dropped for want of room (the tooltip and the table have the whole name). */}
              <XAxis dataKey="group" interval={0} angle={-30} textAnchor="end" height={90} tickFormatter={shortLabel} />
              <YAxis />
              <Tooltip formatter={(value: number) => (metric === 'cost_usd' ? formatUsd(value) : formatCount(value))} />
              {/* A bar of a few pixels at the least: a group that cost a thousandth of another's is still seen. */}
              <Bar dataKey="value" name={metricLabel} fill="#3b6fd8" isAnimationActive={false} minPointSize={(value) => ((value ?? 0) > 0 ? 3 : 0)} />
            </BarChart>
          </ResponsiveContainer>
        )}
        <figcaption className="visually-hidden">The table below has the same numbers.</figcaption>
      </figure>
      )}
      <div className="table-scroll" role="region" aria-label="Usage numbers" tabIndex={0}>
        <table className="usage-table">
          <caption className="visually-hidden">Usage per {by}</caption>
          <thead>
            <tr>
              <th scope="col">{GROUPINGS.find((grouping) => grouping.value === by)!.label}</th>
              <th scope="col">Requests</th>
              <th scope="col">Errors</th>
              <th scope="col">Prompt tokens</th>
              <th scope="col">Completion tokens</th>
              <th scope="col">Total tokens</th>
              <th scope="col">Cost</th>
              <th scope="col">Unpriced</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={by === 'key' ? (row.key_id ?? '') : groupOf(by, row)} data-group={groupOf(by, row)}>
                <th scope="row">{groupOf(by, row)}</th>
                <td data-column="requests">{row.requests}</td>
                <td data-column="errors">{row.errors}</td>
                <td data-column="prompt_tokens">{row.prompt_tokens}</td>
                <td data-column="completion_tokens">{row.completion_tokens}</td>
                <td data-column="total_tokens">{row.total_tokens}</td>
                <td data-column="cost_usd">{formatUsd(row.cost_usd)}</td>
                <td data-column="unpriced_requests">{row.unpriced_requests}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
