import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import type { HealthView } from '../../api.js';
import { adminApi, ApiError } from '../../api.js';
import { ErrorAlert } from '../../components/ErrorAlert.js';

/**
 * Each provider and routed deployment now (docs/dashboard.md#health): its credential, recent
 * error rate and latency from the request log, cooldowns in force, and its last failures linked
 * to their log records. `modelgate status` prints the same.
 */

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : failure === null ? null : String(failure));
const ms = (value: number | null) => (value === null ? '—' : `${value} ms`);
const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)} %`);

export function HealthTable({ health }: { health: HealthView }) {
  return (
    <>
      <table aria-label="Provider health">
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Credential</th>
            <th scope="col">State</th>
            <th scope="col">Requests ({health.window_minutes} min)</th>
            <th scope="col">Error rate</th>
            <th scope="col">p50 / p95</th>
            <th scope="col">Cooling down</th>
          </tr>
        </thead>
        <tbody>
          {health.providers.map((provider) => (
            <tr key={provider.name}>
              <td>{provider.name}</td>
              <td>{provider.credential === 'set' ? 'set' : `missing${provider.missing_variable === null ? '' : `: set ${provider.missing_variable}`}`}</td>
              <td>{provider.state === 'ok' ? 'ok' : `failing (${provider.fault ?? '?'}) since ${provider.since ?? '?'}`}</td>
              <td>{provider.requests}</td>
              <td>{percent(provider.error_rate)}</td>
              <td>
                {ms(provider.latency_p50_ms)} / {ms(provider.latency_p95_ms)}
              </td>
              <td>{provider.cooling_deployments.length === 0 ? 'none' : provider.cooling_deployments.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
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
            <table aria-label="Deployments">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Deployment</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Weight</th>
                  <th scope="col">Cooldown</th>
                </tr>
              </thead>
              <tbody>
                {data.deployments.map((deployment) => (
                  <tr key={`${deployment.model}/${deployment.deployment}`}>
                    <td>{deployment.model}</td>
                    <td>{deployment.deployment}</td>
                    <td>{deployment.provider}</td>
                    <td>{deployment.weight}</td>
                    <td>{deployment.cooling ? 'cooling down' : 'none'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
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
