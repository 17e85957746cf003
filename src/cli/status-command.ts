import type { Command } from 'commander';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { printFields, printJson, printTable, printText } from './output.js';

/** `modelgate status`: the answer of GET /admin/v1/status, for people (docs/admin-api.md#status). */

interface StatusView {
  status: 'ok' | 'degraded';
  version: string;
  api_version: string;
  started_at: string;
  uptime_seconds: number;
  storage: { location: string; reachable: boolean };
  redis: { location: string; reachable: boolean | null };
  providers: {
    name: string;
    configured: boolean;
    missing_variable: string | null;
    description: string | null;
    state: 'ok' | 'failing';
    fault: string | null;
    since: string | null;
    failures: number;
    /** Absent from a gateway older than the health page. */
    recent?: {
      window_minutes: number;
      requests: number;
      errors: number;
      error_rate: number | null;
      latency_p50_ms: number | null;
      latency_p95_ms: number | null;
      last_failures: { request_id: string; at: string; status: number; error_code: string | null; model: string | null }[];
    };
  }[];
  deployments?: { model: string; deployment: string; provider: string; weight: number; cooling: boolean }[];
  workers: { count: number; this_worker: number | null; pid: number };
  log_queue_depth: number;
  /** Absent from a gateway older than the MCP gateway. */
  mcp_servers?: { name: string; transport: 'http' | 'stdio'; state: 'ready' | 'connecting' | 'unavailable'; since: string; reason: string | null }[];
}

/** Exit code of a gateway that answers but is degraded (1 is any error, as for every command). */
export const DEGRADED_EXIT_CODE = 2;

function duration(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  return [days > 0 ? `${days}d` : '', hours > 0 ? `${hours}h` : '', `${minutes}m`].filter((part) => part !== '').join(' ');
}

function providerState(provider: StatusView['providers'][number]): string {
  if (!provider.configured) return `not configured: set ${provider.missing_variable ?? 'its credential'}`;
  if (provider.state === 'ok') return 'ok';
  const fault = provider.fault === 'credential_refused' ? 'refuses the gateway credential' : 'unreachable';
  return `FAILING: ${fault} since ${provider.since ?? '?'} (${provider.failures} ${provider.failures === 1 ? 'call' : 'calls'})`;
}

function printStatus(url: string, status: StatusView): void {
  const reachability = (reachable: boolean | null) => (reachable === null ? '' : reachable ? ' (reachable)' : ' (NOT REACHABLE)');
  printFields([
    ['gateway', `${url}  ${status.status === 'ok' ? 'ok' : 'DEGRADED'}`],
    ['version', `${status.version} (API ${status.api_version})`],
    ['up', `${duration(status.uptime_seconds)} (since ${status.started_at})`],
    ['storage', `${status.storage.location}${reachability(status.storage.reachable)}`],
    ['redis', `${status.redis.location}${reachability(status.redis.reachable)}`],
    ['workers', `${status.workers.count} (this answer from pid ${status.workers.pid}${status.workers.this_worker === null ? '' : `, worker ${status.workers.this_worker}`})`],
    ['log queue', `${status.log_queue_depth} records waiting`],
  ]);
  printText('\n');
  const ms = (value: number | null) => (value === null ? '-' : `${value}`);
  const window = status.providers.find((provider) => provider.recent !== undefined)?.recent?.window_minutes ?? 15;
  printTable(
    ['provider', 'state', `calls ${window}m`, 'errors', 'p50/p95 ms', 'settings'],
    status.providers.map((provider) => [
      provider.name,
      providerState(provider),
      `${provider.recent?.requests ?? '-'}`,
      provider.recent === undefined ? '-' : `${provider.recent.errors}${provider.recent.error_rate === null ? '' : ` (${(provider.recent.error_rate * 100).toFixed(1)}%)`}`,
      provider.recent === undefined ? '-' : `${ms(provider.recent.latency_p50_ms)}/${ms(provider.recent.latency_p95_ms)}`,
      provider.description ?? '',
    ]),
  );
  const deployments = status.deployments ?? [];
  if (deployments.length > 0) {
    printText('\n');
    printTable(['routed model', 'deployment', 'provider', 'weight', 'cooldown'], deployments.map((deployment) => [deployment.model, deployment.deployment, deployment.provider, `${deployment.weight}`, deployment.cooling ? 'COOLING DOWN' : 'none']));
  }
  const failures = status.providers.flatMap((provider) => (provider.recent?.last_failures ?? []).map((failure) => ({ provider: provider.name, ...failure })));
  if (failures.length > 0) {
    printText('\nlast failures (modelgate logs show <request id>):\n');
    printTable(['provider', 'at', 'status', 'error', 'model', 'request id'], failures.map((failure) => [failure.provider, failure.at, `${failure.status}`, failure.error_code ?? '', failure.model ?? '', failure.request_id]));
  }
  const servers = status.mcp_servers ?? [];
  if (servers.length === 0) return;
  printText('\n');
  printTable(
    ['mcp server', 'state'],
    servers.map((server) => [
      server.name,
      server.state === 'ready' ? 'ok' : server.state === 'connecting' ? 'connecting' : `UNAVAILABLE since ${server.since}: ${server.reason ?? '?'}`,
    ]),
  );
}

export function registerStatusCommand(program: Command): void {
  withAdminOptions(
    program
      .command('status')
      .description(`the gateway's health: version, storage, Redis, providers (configured, failing), workers; exit ${DEGRADED_EXIT_CODE} when degraded`),
  ).action(async (options: AdminOptions) => {
    const client = AdminClient.fromOptions(options);
    const status = await client.request<StatusView>('GET', '/status');
    if (options.json === true) printJson(status);
    else printStatus(client.baseUrl, status);
    if (status.status !== 'ok') process.exitCode = DEGRADED_EXIT_CODE;
  });
}
