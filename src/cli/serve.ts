import { ConfigError, loadConfig, type CommandLineSettings } from '../config/index.js';
import { startGateway } from '../server/gateway.js';

/** `modelgate serve`: starts the gateway and shuts it down gracefully on SIGTERM/SIGINT. */
export async function serve(flags: CommandLineSettings): Promise<void> {
  let config;
  try {
    config = loadConfig({ flags });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`modelgate: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const gateway = await startGateway(config);
  const { secrets, storage } = gateway.context;
  const storageText = storage.kind === 'postgres' ? 'PostgreSQL' : `SQLite in ${config.dataDir}`;
  const tokenText =
    secrets.adminTokenFile !== undefined ? `admin token in ${secrets.adminTokenFile}` : 'admin token from MODELGATE_ADMIN_TOKEN';
  process.stdout.write(`modelgate listening on ${gateway.url} (storage: ${storageText}; ${tokenText})\n`);

  const shutdown = (signal: string) => {
    process.stdout.write(`modelgate: ${signal} received, finishing in-flight requests\n`);
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`modelgate: shutdown failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
