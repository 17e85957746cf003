import { useMemo, useState, type ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { Link } from 'react-router-dom';
import type { OverviewBucket, OverviewView } from '@modelgate/admin-api';
import { adminApi, ApiError, type NearestBudgetView } from '../../api.js';
import { formatCount, formatUsd } from '../../format.js';
import { DataTable } from '../../components/DataTable.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';
import { SelectField } from '../../components/SelectField.js';
import { HealthTable } from './HealthPage.js';

/**
 * The dashboard's landing (docs/dashboard.md#overview): requests, errors, latency and spend over
 * time, the top models, keys, teams and end users, the budgets nearest their limit, and the providers' health and routing cooldowns now, from one
 * admin API call kept fresh by the query cache.
 */

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : failure === null ? null : String(failure));
const ms = (value: number | null) => (value === null ? '—' : `${value} ms`);
const dollars = (value: number) => formatUsd(value);

function bucketLabel(start: string, minutes: number): string {
  const date = new Date(start);
  return minutes < 1440 ? date.toISOString().slice(5, 16).replace('T', ' ') : date.toISOString().slice(0, 10);
}

function bucketColumns(minutes: number, peak: number) {
  const column = createColumnHelper<OverviewBucket>();
  return [
    column.accessor('start', { header: 'From', cell: (cell) => bucketLabel(cell.getValue(), minutes) }),
    column.accessor('requests', {
      header: 'Requests',
      cell: (cell) => (
        <>
          <span className="bar" aria-hidden="true" style={{ width: `${Math.max(cell.getValue() > 0 ? 2 : 0, (cell.getValue() / peak) * 100)}px` }} /> {cell.getValue()}
        </>
      ),
    }),
    column.accessor('errors', { header: 'Errors' }),
    column.accessor('latency_p50_ms', { header: 'p50', cell: (cell) => ms(cell.getValue()) }),
    column.accessor('latency_p95_ms', { header: 'p95', cell: (cell) => ms(cell.getValue()) }),
    column.accessor('cost_usd', { header: 'Spend', cell: (cell) => dollars(cell.getValue()) }),
  ];
}

/** The columns of a top list: what is ranked, then its requests and spend. */
function rankedColumns<Row extends { requests: number; cost_usd: number }>(header: string, name: (row: Row) => ReactNode) {
  const column = createColumnHelper<Row>();
  return [
    column.display({ id: 'name', header, cell: (cell) => name(cell.row.original) }),
    column.accessor((row) => row.requests, { id: 'requests', header: 'Requests' }),
    column.accessor((row) => row.cost_usd, { id: 'spend', header: 'Spend', cell: (cell) => dollars(cell.getValue()) }),
  ];
}

const TOP_MODELS = rankedColumns<OverviewView['top_models'][number]>('Model', (model) => model.model);
const TOP_KEYS = rankedColumns<OverviewView['top_keys'][number]>('Key', (key) => <Link to={`/logs?key_id=${encodeURIComponent(key.key_id)}`}>{key.name ?? key.key_id}</Link>);
const TOP_TEAMS = rankedColumns<OverviewView['top_teams'][number]>('Team', (team) => team.name ?? team.team_id);
const TOP_END_USERS = rankedColumns<OverviewView['top_end_users'][number]>('End user', (user) => user.end_user);

const budget = createColumnHelper<NearestBudgetView>();
const BUDGET_COLUMNS = [
  budget.display({
    id: 'budget',
    header: 'Budget',
    cell: ({ row }) => (
      <>
        {row.original.level.replace('_', ' ')} {row.original.target}
      </>
    ),
  }),
  budget.accessor('used', { header: 'Used', cell: (cell) => `${Math.round(cell.getValue() * 100)}%` }),
  budget.display({
    id: 'spent',
    header: 'Spent',
    cell: ({ row: { original } }) => (
      <>
        {original.usd !== null && `${dollars(original.spent_usd)} of ${dollars(original.usd)}`}
        {original.usd !== null && original.tokens !== null && '; '}
        {original.tokens !== null && `${formatCount(original.spent_tokens)} of ${formatCount(original.tokens)} tokens`}
      </>
    ),
  }),
  budget.accessor('period', { header: 'Period' }),
];

export function OverviewPage() {
  const [hours, setHours] = useState('24');
  const overview = useQuery({ queryKey: ['overview', hours], queryFn: () => adminApi.overview(Number(hours)), refetchInterval: 30_000 });
  const data = overview.data;
  const peak = Math.max(1, ...(data?.buckets ?? []).map((bucket) => bucket.requests));
  const minutes = data?.bucket_minutes ?? 60;
  const buckets = useMemo(() => bucketColumns(minutes, peak), [minutes, peak]);
  return (
    <section>
      <h1>Overview</h1>
      <div className="filters">
        <SelectField
          id="overview-window"
          label="Window"
          value={hours}
          options={[
            { value: '24', label: 'last 24 hours' },
            { value: '168', label: 'last 7 days' },
            { value: '720', label: 'last 30 days' },
          ]}
          onChange={setHours}
        />
      </div>
      <ErrorAlert message={messageOf(overview.error)} />
      {data === undefined ? (
        overview.isPending && (
          <p className="loading" role="status">
            Loading…
          </p>
        )
      ) : (
        <>
          <dl className="summary" aria-label="Totals">
            <div>
              <dt>Requests</dt>
              <dd>{data.totals.requests}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd>{data.totals.errors}</dd>
            </div>
            <div>
              <dt>Latency p50 / p95</dt>
              <dd>
                {ms(data.totals.latency_p50_ms)} / {ms(data.totals.latency_p95_ms)}
              </dd>
            </div>
            <div>
              <dt>Spend</dt>
              <dd>{dollars(data.totals.cost_usd)}</dd>
            </div>
          </dl>
          {data.truncated && <p className="muted">More calls than one summary reads: the figures are of the newest.</p>}
          <h2>Over time</h2>
          <DataTable caption="Requests over time" columns={buckets} rows={data.buckets} rowKey={(bucket) => bucket.start} />
          <div className="columns">
            <div>
              <h2>Top models</h2>
              <DataTable caption="Top models" columns={TOP_MODELS} rows={data.top_models} rowKey={(model) => model.model} />
            </div>
            <div>
              <h2>Top keys</h2>
              <DataTable caption="Top keys" columns={TOP_KEYS} rows={data.top_keys} rowKey={(key) => key.key_id} />
            </div>
          </div>
          <div className="columns">
            <div>
              <h2>Top teams</h2>
              <DataTable caption="Top teams" columns={TOP_TEAMS} rows={data.top_teams} rowKey={(team) => team.team_id} />
            </div>
            <div>
              <h2>Top end users</h2>
              <DataTable caption="Top end users" columns={TOP_END_USERS} rows={data.top_end_users} rowKey={(user) => user.end_user} empty="No request named an end user." />
            </div>
          </div>
          <h2>Budgets nearest their limit</h2>
          <DataTable caption="Budgets nearest their limit" columns={BUDGET_COLUMNS} rows={data.budgets_nearest_limit} rowKey={(budget) => budget.id} empty="No budget is set." />
          <p>
            <Link to="/budgets">Open the budgets page</Link>
          </p>
          <h2>Providers now</h2>
          <HealthTable health={data.health} />
          <p>
            <Link to="/health">Open the health page</Link>
          </p>
        </>
      )}
    </section>
  );
}
