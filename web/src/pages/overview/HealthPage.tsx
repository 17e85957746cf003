import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { Link } from 'react-router-dom';
import type { HealthView } from '../../api.js';
import { adminApi, ApiError } from '../../api.js';
import { DataTable } from '../../components/DataTable.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';

/**
 * Each provider and routed deployment now (docs/dashboard.md#health): its credential, recent
 * error rate and latency from the request log, cooldowns in force, and its last failures linked
 * to their log records. `modelgate status` prints the same.
 */

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : failure === null ? null : String(failure));
const ms = (value: number | null) => (value === null ? '—' : `${value} ms`);
const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)} %`);

const provider = createColumnHelper<HealthView['providers'][number]>();

function providerColumns(windowMinutes: number) {
  return [
    provider.accessor('name', { header: 'Provider' }),
    provider.display({
      id: 'credential',
      header: 'Credential',
      cell: ({ row: { original } }) => (original.credential === 'set' ? 'set' : `missing${original.missing_variable === null ? '' : `: set ${original.missing_variable}`}`),
    }),
    provider.display({ id: 'state', header: 'State', cell: ({ row: { original } }) => (original.state === 'ok' ? 'ok' : `failing (${original.fault ?? '?'}) since ${original.since ?? '?'}`) }),
    provider.accessor('requests', { header: `Requests (${windowMinutes} min)` }),
    provider.accessor('error_rate', { header: 'Error rate', cell: (cell) => percent(cell.getValue()) }),
    provider.display({
      id: 'latency',
      header: 'p50 / p95',
      cell: ({ row: { original } }) => (
        <>
          {ms(original.latency_p50_ms)} / {ms(original.latency_p95_ms)}
        </>
      ),
    }),
    provider.accessor('cooling_deployments', { header: 'Cooling down', cell: (cell) => (cell.getValue().length === 0 ? 'none' : cell.getValue().join(', ')) }),
  ];
}

const deployment = createColumnHelper<HealthView['deployments'][number]>();
const DEPLOYMENT_COLUMNS = [
  deployment.accessor('model', { header: 'Model' }),
  deployment.accessor('deployment', { header: 'Deployment' }),
  deployment.accessor('provider', { header: 'Provider' }),
  deployment.accessor('weight', { header: 'Weight' }),
  deployment.accessor('cooling', { header: 'Cooldown', cell: (cell) => (cell.getValue() ? 'cooling down' : 'none') }),
];

export function HealthTable({ health }: { health: HealthView }) {
  const columns = useMemo(() => providerColumns(health.window_minutes), [health.window_minutes]);
  return <DataTable caption="Provider health" columns={columns} rows={health.providers} rowKey={(row) => row.name} />;
}

export function HealthPage() {
  const health = useQuery({ queryKey: ['health'], queryFn: () => adminApi.health(), refetchInterval: 15_000 });
  const data = health.data;
  return (
    <section>
      <h1>Health</h1>
      <ErrorAlert message={messageOf(health.error)} />
      {data === undefined ? (
        health.isPending && (
          <p className="loading" role="status">
            Loading…
          </p>
        )
      ) : (
        <>
          <HealthTable health={data} />
          <h2>Routed deployments</h2>
          {data.deployments.length === 0 ? (
            <p className="muted">No model is routed: each is served by its own provider.</p>
          ) : (
            <DataTable caption="Deployments" columns={DEPLOYMENT_COLUMNS} rows={data.deployments} rowKey={(row) => `${row.model}/${row.deployment}`} />
          )}
          <h2>Last failures</h2>
          {data.providers.every((provider) => provider.last_failures.length === 0) ? (
            <p className="muted">No failed call in the last {data.window_minutes} minutes.</p>
          ) : (
            <ul aria-label="Last failures">
              {data.providers.flatMap((provider) =>
                provider.last_failures.map((failure) => (
                  <li key={failure.request_id}>
                    {provider.name}: {failure.status} {failure.error_code ?? ''} {failure.model ?? ''} at {failure.at} —{' '}
                    <Link to={`/logs/${encodeURIComponent(failure.request_id)}`}>log record {failure.request_id}</Link>
                  </li>
                )),
              )}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
