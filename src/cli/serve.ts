import { Accounts } from '../accounts/index.js';
import { firstAccountAdvice } from './first-run.js';
import cluster, { type Worker } from 'node:cluster';
import { ConfigError, loadConfig, loadedConfigFile, resolveSecrets, timerDelay, workerCount, type CommandLineSettings, type GatewayConfig } from '../config/index.js';
import { openStorage, whenStorageAnswers } from '../storage/index.js';
import { configReloadChange, createProcessLogger, standbyWhileWaiting, startGateway, storageOptions, waitingForStorage, type RunningGateway } from '../server/index.js';
import type { KeyChangeChannel } from '../keys/index.js';
import { redactText } from '../logs/index.js';
import { startupReport } from './startup-report.js';
import { mergeRenderings, type GatewayMetrics } from '../metrics/index.js';
import { onLauncherGone } from './node-flags.js';
import { watchRoutingConfig } from '../routing/index.js';

/**
 * Messages between the primary and its workers: a worker's start; the scrape of GET /metrics,
 * which reaches one worker but must show them all (Prometheus sees one target): that worker
 * asks the primary, which gathers every worker's rendering for it; and a key changed through
 * one worker, which the primary passes to the others (the workers may share nothing else that
 * carries messages: the embedded SQLite database does not).
 */
type ClusterMessage =
  | { type: 'listening'; url: string; report: string[] }
  | { type: 'key-changed'; message: string }
  | { type: 'metrics-request'; id: number }
  | { type: 'metrics-render'; id: number }
  | { type: 'metrics-text'; id: number; text: string }
  | { type: 'metrics-result'; id: number; texts: string[] };

/** How long the primary waits for the workers' metrics; a worker that does not answer in time is left out. */
const METRICS_GATHER_MS = 2_000;
/** How long a worker waits for the primary before it answers a scrape with its own metrics alone. */
const METRICS_REQUEST_MS = 4_000;

function loadOrExit(flags: CommandLineSettings): GatewayConfig {
  try {
    const config = loadConfig({ flags });
    workerCount(config);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`modelgate: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

function describe(config: GatewayConfig, storageKind: string, adminTokenFile: string | undefined): string {
  const storageText = storageKind === 'postgres' ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
  // A given token comes from the environment, which wins, or else from the config file.
  const givenFrom = process.env.MODELGATE_ADMIN_TOKEN ? 'MODELGATE_ADMIN_TOKEN' : 'the config file (adminToken)';
  const tokenText = adminTokenFile !== undefined ? `admin token in ${adminTokenFile}` : `admin token from ${givenFrom}`;
  return `storage: ${storageText}; ${tokenText}`;
}

/** `modelgate serve`: one process, or a primary with N workers sharing the port. */
export async function serve(flags: CommandLineSettings): Promise<void> {
  const config = loadOrExit(flags);
  const workers = workerCount(config);
  if (cluster.isWorker) return serveWorker(config, flags);
  if (workers === 1) return serveSingle(config, flags);
  return servePrimary(config, workers);
}

/** The start-up report of this process, written to its process log; its lines are for stdout. */
function reportStart(gateway: RunningGateway, flags: CommandLineSettings): string[] {
  const report = startupReport(gateway, loadedConfigFile({ flags }));
  gateway.context.logger.info(report.fields, 'modelgate started');
  return report.lines;
}

async function serveSingle(config: GatewayConfig, flags: CommandLineSettings): Promise<void> {
  const gateway = await startGateway(config);
  const { secrets, storage } = gateway;
  // Asked before the listening line: once that is out, a SIGTERM must find the shutdown handlers,
  // which are in place before it is written (a signal sent on reading it may come at once).
  const hasAccounts = await gateway.context.accounts.users.exist();
  const report = reportStart(gateway, flags);
  serveUntilStopped(config, gateway, flags);
  process.stdout.write(`modelgate listening on ${gateway.url} (${describe(config, storage.kind, secrets.adminTokenFile)})\n${report.join('\n')}\n`);
  process.stdout.write(firstAccountAdvice(hasAccounts));
}

/** Serves until a signal stops the process; meanwhile the routing and the MCP servers are reloaded on SIGHUP and when the config file changes (docs/routing.md, docs/mcp.md). */
function serveUntilStopped(config: GatewayConfig, gateway: RunningGateway, flags: CommandLineSettings): void {
  const file = loadedConfigFile({ flags });
  let inForce = config;
  const stopWatching = watchRoutingConfig({
    file,
    reload: (trigger) => {
      const reloaded = loadConfig({ flags });
      // Each part is checked whole before it changes: an invalid one keeps what is in force.
      gateway.context.mcp.applyServers(reloaded.mcp.servers);
      gateway.context.applyRouting(reloaded.routing);
      // Each serving process reloads (and records) for itself; a worker says which it is.
      const change = configReloadChange(trigger, file, inForce, reloaded, cluster.isWorker ? `worker ${cluster.worker!.id}` : undefined);
      inForce = reloaded;
      gateway.context.audit.record({ kind: 'system' }, change).catch((error: unknown) => {
        gateway.context.logger.error({ reason: redactText((error as Error).message) }, 'the audit log entry of a configuration reload was not written');
      });
    },
    log: gateway.context.logger,
  });
  runUntilStopped(
    config,
    async () => {
      stopWatching();
      await gateway.close();
    },
    logFault(gateway),
  );
}

async function serveWorker(config: GatewayConfig, flags: CommandLineSettings): Promise<void> {
  const gateway = await startGateway(config, { keyChannels: [siblingWorkers()], standby: false });
  scrapeEveryWorker(gateway.context.metrics);
  serveUntilStopped(config, gateway, flags);
  process.send?.({ type: 'listening', url: gateway.url, report: reportStart(gateway, flags) } satisfies ClusterMessage);
}

/** A worker's channel to its siblings for key changes, through the primary. */
function siblingWorkers(): KeyChangeChannel {
  return {
    publish(message) {
      // A primary already gone (the worker is shutting down) makes the send fail: nothing to tell.
      if (process.connected) process.send?.({ type: 'key-changed', message } satisfies ClusterMessage, undefined, undefined, () => undefined);
    },
    async subscribe(onMessage) {
      process.on('message', (message: ClusterMessage) => {
        if (message?.type === 'key-changed') onMessage(message.message);
      });
    },
    async close() {},
  };
}

/** The primary's side of key changes: what one worker changed, told to every other one. */
function relayKeyChanges(): void {
  cluster.on('message', (sender, message: ClusterMessage) => {
    if (message?.type !== 'key-changed') return;
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker !== undefined && worker.id !== sender.id && worker.isConnected()) worker.send(message, undefined, () => undefined);
    }
  });
}

/** A worker's side of GET /metrics: its samples carry `worker`, and a scrape shows every worker's. */
function scrapeEveryWorker(metrics: GatewayMetrics): void {
  const labels = { worker: String(cluster.worker!.id) };
  const send = (message: ClusterMessage) => process.send?.(message);
  const pending = new Map<number, (texts: string[]) => void>();
  let lastRequest = 0;
  process.on('message', (message: ClusterMessage) => {
    if (message.type === 'metrics-render') send({ type: 'metrics-text', id: message.id, text: metrics.render(labels) });
    else if (message.type === 'metrics-result') pending.get(message.id)?.(message.texts);
  });
  metrics.gatherWith(
    () =>
      new Promise((resolve) => {
        const id = (lastRequest += 1);
        const done = (texts: string[]) => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(mergeRenderings(texts));
        };
        const timer = setTimeout(() => done([metrics.render(labels)]), METRICS_REQUEST_MS);
        pending.set(id, done);
        send({ type: 'metrics-request', id });
      }),
  );
}

/** The primary's side of GET /metrics: every ready worker's rendering, for the worker the scrape reached. */
function gatherWorkerMetrics(ready: ReadonlySet<number>): (requester: Worker, requestId: number) => void {
  const gathering = new Map<number, (worker: Worker, text: string) => void>();
  let lastGathering = 0;
  cluster.on('message', (worker, message: ClusterMessage) => {
    if (message?.type === 'metrics-text') gathering.get(message.id)?.(worker, message.text);
  });
  return (requester, requestId) => {
    const id = (lastGathering += 1);
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && ready.has(worker.id));
    const waiting = new Set(workers.map((worker) => worker.id));
    const texts: [number, string][] = [];
    const finish = () => {
      clearTimeout(timer);
      gathering.delete(id);
      // In worker order, so consecutive scrapes list the series alike.
      const ordered = texts.sort(([a], [b]) => a - b).map(([, text]) => text);
      if (requester.isConnected()) requester.send({ type: 'metrics-result', id: requestId, texts: ordered } satisfies ClusterMessage);
    };
    const timer = setTimeout(finish, METRICS_GATHER_MS);
    gathering.set(id, (worker, text) => {
      if (!waiting.delete(worker.id)) return;
      texts.push([worker.id, text]);
      if (waiting.size === 0) finish();
    });
    for (const worker of workers) worker.send({ type: 'metrics-render', id } satisfies ClusterMessage);
    if (workers.length === 0) finish();
  };
}

function logFault(gateway: RunningGateway): (error: unknown) => void {
  return (error) => gateway.context.logger.fatal({ err: error }, 'an error no code handled; shutting down after in-flight requests (exit 1)');
}

/** A worker that dies before it is ready is restarted after 1 s, then 2, 4 … up to 30 s; a ready one resets this. */
const FIRST_RESTART_DELAY_MS = 1_000;
const MAX_RESTART_DELAY_MS = 30_000;

async function servePrimary(config: GatewayConfig, workers: number): Promise<void> {
  // Secrets and migrations once, before any worker starts, so workers never race to create them.
  const secrets = resolveSecrets(config);
  const waiting = waitingForStorage(config, (_fields, message) => process.stderr.write(`modelgate: ${message}\n`));
  // Until the database answers the primary itself listens (healthz 200, readyz 503); the workers take the port after.
  const standby = standbyWhileWaiting(config, waiting, (url) => process.stderr.write(`modelgate: answering on ${url} while waiting for the database (/healthz 200, /readyz 503)\n`));
  const storage = await whenStorageAnswers(() => openStorage(storageOptions(config, createProcessLogger(config.server.logLevel))), standby.waiting).finally(() => standby.close());
  const storageKind = storage.kind;
  const hasAccounts = await new Accounts(storage.db).users.exist();
  await storage.close();

  let shuttingDown = false;
  let listening = 0;
  /** Workers that reported listening: one that dies later is replaced at once. */
  const ready = new Set<number>();
  let restartDelayMs = FIRST_RESTART_DELAY_MS;
  // Each worker is an instance: a Redis outage's share assumes at least this many, also in a worker started during one.
  const workerEnv = { MODELGATE_LIMITS_OUTAGE_INSTANCES: String(Math.max(config.limits.outageInstances, workers)) };
  const fork = () => cluster.fork(workerEnv);
  const gatherMetrics = gatherWorkerMetrics(ready);
  relayKeyChanges();
  cluster.on('message', (worker, message: ClusterMessage) => {
    if (message?.type === 'metrics-request') gatherMetrics(worker, message.id);
    if (message?.type !== 'listening') return;
    ready.add(worker.id);
    restartDelayMs = FIRST_RESTART_DELAY_MS;
    listening += 1;
    if (listening === workers) {
      process.stdout.write(
        `modelgate listening on ${message.url} with ${workers} workers (${describe(config, storageKind, secrets.adminTokenFile)})\n${message.report.join('\n')}\n`,
      );
      process.stdout.write(firstAccountAdvice(hasAccounts));
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (shuttingDown) return;
    const pid = worker.process.pid;
    if (ready.delete(worker.id)) {
      process.stderr.write(`modelgate: worker ${pid} exited (${signal ?? code}); starting a new one\n`);
      fork();
      return;
    }
    // It died starting (a database gone, say): wait, longer each time, rather than restart in a loop.
    const delayMs = restartDelayMs;
    restartDelayMs = Math.min(restartDelayMs * 2, MAX_RESTART_DELAY_MS);
    process.stderr.write(`modelgate: worker ${pid} exited before it was ready (${signal ?? code}); starting a new one in ${delayMs / 1000} s\n`);
    setTimeout(() => {
      if (!shuttingDown) fork();
    }, delayMs);
  });
  for (let index = 0; index < workers; index += 1) fork();
  // Each worker reloads its routing itself; a SIGHUP sent to the primary is passed on (unhandled, it would end the primary).
  process.on('SIGHUP', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGHUP');
  });

  const reportFault = (error: unknown) => process.stderr.write(`modelgate: an error no code handled in the primary; stopping the workers (exit 1): ${redactText(String(error))}\n`);
  runUntilStopped(config, async () => {
    shuttingDown = true;
    const exits = Object.values(cluster.workers ?? {}).map(
      (worker) => new Promise<void>((resolve) => (worker === undefined ? resolve() : worker.once('exit', () => resolve()))),
    );
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    await Promise.all(exits);
  }, reportFault);
}

/** How long a shutdown forced by a fault may take beyond the grace period before the process exits anyway. */
const FAULT_FLUSH_MS = 30_000;

/**
 * Graceful shutdown on SIGTERM/SIGINT: stop accepting, finish in-flight work, flush, exit 0.
 * A second signal while that runs (a supervisor that repeats it, a second Ctrl-C) is noted
 * and ignored: with no listener left, node's default action would kill the process and lose
 * the request-log rows still queued.
 *
 * A fault — an exception or a rejected promise no code handled — leaves the process in a state
 * nobody designed for, and node's default (exit at once) would cut every open request and lose
 * the queued log rows. So it is logged and the same shutdown runs, exiting 1 so the supervisor
 * (or, for a worker, the primary) starts a fresh process. Because nothing outside would stop a
 * process whose shutdown hangs, a fault also sets a deadline: the grace period plus 30 s.
 */
function runUntilStopped(config: GatewayConfig, close: () => Promise<void>, reportFault: (error: unknown) => void): void {
  let shuttingDown = false;
  let exitCode = 0;
  const shutdown = (announcement: string) => {
    shuttingDown = true;
    if (!cluster.isWorker) process.stdout.write(`modelgate: ${announcement}, finishing in-flight requests\n`);
    close().then(
      () => process.exit(exitCode),
      (error: unknown) => {
        process.stderr.write(`modelgate: shutdown failed: ${redactText(String(error))}\n`);
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    if (!shuttingDown) return shutdown(`${signal} received`);
    if (!cluster.isWorker) process.stdout.write(`modelgate: ${signal} received again; still finishing in-flight requests and writing the request log\n`);
  };
  const fault = (error: unknown) => {
    reportFault(error);
    if (exitCode !== 0) return;
    exitCode = 1;
    setTimeout(() => process.exit(1), timerDelay(config.server.shutdownGraceMs + FAULT_FLUSH_MS)).unref();
    if (!shuttingDown) shutdown('an error no code handled');
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // Nothing else would stop a server whose launcher was killed: it stops as on SIGTERM.
  onLauncherGone(() => {
    if (!shuttingDown) shutdown('the process that started this one is gone');
  });
  process.on('uncaughtException', fault);
  process.on('unhandledRejection', fault);
}
