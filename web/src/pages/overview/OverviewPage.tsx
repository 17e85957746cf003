import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { adminApi, ApiError } from '../../api.js';
import { formatCount, formatUsd } from '../../format.js';
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

export function OverviewPage() {
  const [hours, setHours] = useState('24');
  const overview = useQuery({ queryKey: ['overview', hours], queryFn: () => adminApi.overview(Number(hours)), refetchInterval: 30_000 });
  const data = overview.data;
  const peak = Math.max(1, ...(data?.buckets ?? []).map((bucket) => bucket.requests));
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
          <table aria-label="Requests over time">
            <thead>
              <tr>
                <th scope="col">From</th>
                <th scope="col">Requests</th>
                <th scope="col">Errors</th>
                <th scope="col">p50</th>
                <th scope="col">p95</th>
                <th scope="col">Spend</th>
              </tr>
            </thead>
            <tbody>
              {data.buckets.map((bucket) => (
                <tr key={bucket.start}>
                  <td>{bucketLabel(bucket.start, data.bucket_minutes)}</td>
                  <td>
                    <span className="bar" aria-hidden="true" style={{ width: `${Math.max(bucket.requests > 0 ? 2 : 0, (bucket.requests / peak) * 100)}px` }} /> {bucket.requests}
                  </td>
                  <td>{bucket.errors}</td>
                  <td>{ms(bucket.latency_p50_ms)}</td>
                  <td>{ms(bucket.latency_p95_ms)}</td>
                  <td>{dollars(bucket.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div className="columns">
            <div>
              <h2>Top models</h2>
              <table aria-label="Top models">
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Spend</th>
                  </tr>
                </thead>
                <tbody>
                  {data.top_models.map((model) => (
                    <tr key={model.model}>
                      <td>{model.model}</td>
                      <td>{model.requests}</td>
                      <td>{dollars(model.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div>
              <h2>Top keys</h2>
              <table aria-label="Top keys">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Spend</th>
                  </tr>
                </thead>
                <tbody>
                  {data.top_keys.map((key) => (
                    <tr key={key.key_id}>
                      <td>
                        <Link to={`/logs?key_id=${encodeURIComponent(key.key_id)}`}>{key.name ?? key.key_id}</Link>
                      </td>
                      <td>{key.requests}</td>
                      <td>{dollars(key.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>
          <div className="columns">
            <div>
              <h2>Top teams</h2>
              <table aria-label="Top teams">
                <thead>
                  <tr>
                    <th scope="col">Team</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Spend</th>
                  </tr>
                </thead>
                <tbody>
                  {data.top_teams.map((team) => (
                    <tr key={team.team_id}>
                      <td>{team.name ?? team.team_id}</td>
                      <td>{team.requests}</td>
                      <td>{dollars(team.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div>
              <h2>Top end users</h2>
              <table aria-label="Top end users">
                <thead>
                  <tr>
                    <th scope="col">End user</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Spend</th>
                  </tr>
                </thead>
                <tbody>
                  {data.top_end_users.length === 0 && (
                    <tr>
                      <td colSpan={3} className="muted">
                        No request named an end user.
                      </td>
                    </tr>
                  )}
                  {data.top_end_users.map((user) => (
                    <tr key={user.end_user}>
                      <td>{user.end_user}</td>
                      <td>{user.requests}</td>
                      <td>{dollars(user.cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>
          <h2>Budgets nearest their limit</h2>
          <table aria-label="Budgets nearest their limit">
            <thead>
              <tr>
                <th scope="col">Budget</th>
                <th scope="col">Used</th>
                <th scope="col">Spent</th>
                <th scope="col">Period</th>
              </tr>
            </thead>
            <tbody>
              {data.budgets_nearest_limit.length === 0 && (
                <tr>
                  <td colSpan={4} className="muted">
                    No budget is set.
                  </td>
                </tr>
              )}
              {data.budgets_nearest_limit.map((budget) => (
                <tr key={budget.id}>
                  <td>
                    {budget.level.replace('_', ' ')} {budget.target}
                  </td>
                  <td>{Math.round(budget.used * 100)}%</td>
                  <td>
                    {budget.usd !== null && `${dollars(budget.spent_usd)} of ${dollars(budget.usd)}`}
                    {budget.usd !== null && budget.tokens !== null && '; '}
                    {budget.tokens !== null && `${formatCount(budget.spent_tokens)} of ${formatCount(budget.tokens)} tokens`}
                  </td>
                  <td>{budget.period}</td>
                </tr>
              ))}
            </tbody>
          </table>
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
