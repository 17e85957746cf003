import { Command, InvalidArgumentError } from 'commander';
import { serve } from './serve.js';

export function parseInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

const program = new Command('modelgate')
  .description('Self-hosted, OpenAI-compatible model gateway')
  .showHelpAfterError()
  .enablePositionalOptions();

program
  .command('serve')
  .description('serve the gateway (embedded storage in ./.modelgate unless DATABASE_URL is set)')
  .option('--port <n>', 'listen port (default 8080)', parseInteger)
  .option('--host <h>', 'listen address (default 127.0.0.1)')
  .option('--data-dir <d>', 'data directory (default ./.modelgate)')
  .option('--config <f>', 'YAML config file (default ./modelgate.yaml)')
  .option('--workers <n>', 'worker processes (default 1)', parseInteger)
  .action(async (options: { port?: number; host?: string; dataDir?: string; config?: string; workers?: number }) => {
    await serve({
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
      ...(options.config !== undefined ? { configPath: options.config } : {}),
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
    });
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`modelgate: ${(error as Error).message}\n`);
  process.exit(1);
});
