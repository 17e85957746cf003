import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig, resolveSecrets, type CommandLineSettings, type GatewayConfig } from '../config/index.js';
import { openStorage } from '../storage/index.js';
import { startGateway } from '../server/gateway.js';

interface WorkerMessage {
  type: 'listening';
  url: string;
}

/**
 * How many processes to run. `0` (the default) means one per core when Redis is configured
 * (limits are then shared) and one otherwise; more than one without Redis is refused, because
 * each worker would enforce its own per-minute limit.
 */
export function workerCount(config: GatewayConfig): number {
  const requested = config.server.workers;
  if (requested === 0) return config.redisUrl !== undefined ? availableParallelism() : 1;
  if (requested > 1 && config.redisUrl === undefined) {
    throw new ConfigError(
      `invalid setting server.workers: ${requested} workers need REDIS_URL so per-key limits hold across them; set REDIS_URL or use --workers 1`,
    );
  }
  return requested;
}

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
  const tokenText = adminTokenFile !== undefined ? `admin token in ${adminTokenFile}` : 'admin token from MODELGATE_ADMIN_TOKEN';
  return `storage: ${storageText}; ${tokenText}`;
}

/** `modelgate serve`: one process, or a primary with N workers sharing the port. */
export async function serve(flags: CommandLineSettings): Promise<void> {
  const config = loadOrExit(flags);
  const workers = workerCount(config);
  if (cluster.isWorker) return serveWorker(config);
  if (workers === 1) return serveSingle(config);
  return servePrimary(config, workers);
}

async function serveSingle(config: GatewayConfig): Promise<void> {
  const gateway = await startGateway(config);
  const { secrets, storage } = gateway.context;
  process.stdout.write(`modelgate listening on ${gateway.url} (${describe(config, storage.kind, secrets.adminTokenFile)})\n`);
  onTerminate(async () => gateway.close());
}

async function serveWorker(config: GatewayConfig): Promise<void> {
  const gateway = await startGateway(config);
  process.send?.({ type: 'listening', url: gateway.url } satisfies WorkerMessage);
  onTerminate(async () => gateway.close());
}

async function servePrimary(config: GatewayConfig, workers: number): Promise<void> {
  // Secrets and migrations once, before any worker starts, so workers never race to create them.
  const secrets = resolveSecrets(config);
  const storage = await openStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const storageKind = storage.kind;
  await storage.close();

  let shuttingDown = false;
  let listening = 0;
  const fork = () => cluster.fork();
  cluster.on('message', (_worker, message: WorkerMessage) => {
    if (message?.type !== 'listening') return;
    listening += 1;
    if (listening === workers) {
      process.stdout.write(`modelgate listening on ${message.url} with ${workers} workers (${describe(config, storageKind, secrets.adminTokenFile)})\n`);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (shuttingDown) return;
    process.stderr.write(`modelgate: worker ${worker.process.pid} exited (${signal ?? code}); starting a new one\n`);
    fork();
  });
  for (let index = 0; index < workers; index += 1) fork();

  onTerminate(async () => {
    shuttingDown = true;
    const exits = Object.values(cluster.workers ?? {}).map(
      (worker) => new Promise<void>((resolve) => (worker === undefined ? resolve() : worker.once('exit', () => resolve()))),
    );
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    await Promise.all(exits);
  });
}

/**
 * Graceful shutdown on SIGTERM/SIGINT: stop accepting, finish in-flight work, flush, exit 0.
 * A second signal while that runs (a supervisor that repeats it, a second Ctrl-C) is noted
 * and ignored: with no listener left, node's default action would kill the process and lose
 * the request-log rows still queued.
 */
function onTerminate(close: () => Promise<void>): void {
  let shuttingDown = false;
  const shutdown = (signal: string) => {
    if (shuttingDown) {
      if (!cluster.isWorker) process.stdout.write(`modelgate: ${signal} received again; still finishing in-flight requests and writing the request log\n`);
      return;
    }
    shuttingDown = true;
    if (!cluster.isWorker) process.stdout.write(`modelgate: ${signal} received, finishing in-flight requests\n`);
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`modelgate: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
