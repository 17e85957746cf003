import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { parseWholeNumber } from './arguments.js';
import { registerAgentsCommand } from './agents-command.js';
import { registerAuditCommand } from './audit-command.js';
import { registerBudgetsCommand } from './budgets-command.js';
import { registerKeysCommand } from './keys-command.js';
import { registerProvidersCommand } from './providers-command.js';
import { registerModelsCommand } from './models-command.js';
import { registerLogsCommand } from './logs-command.js';
import { registerTeamsCommand } from './teams-command.js';
import { registerUsageCommand } from './usage-command.js';
import { registerUsersCommand } from './users-command.js';
import { registerStatusCommand } from './status-command.js';
import { registerCacheCommand } from './cache-command.js';
import { inert } from './output.js';

/**
 * The `modelgate` CLI (docs/cli.md). Each command group lives in its own file and adds
 * itself with one `register…Command(program)` call below.
 */

function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the gateway (embedded storage in ./.modelgate unless DATABASE_URL is set)')
    .option('--port <n>', 'listen port (default 8080)', parseWholeNumber)
    .option('--host <h>', 'listen address (default 127.0.0.1)')
    .option('--data-dir <d>', 'data directory (default ./.modelgate)')
    .option('--config <f>', 'YAML config file (default ./modelgate.yaml)')
    .option('--workers <n>', 'worker processes (default: one per core with REDIS_URL, else 1)', parseWholeNumber)
    .action(async (options: { port?: number; host?: string; dataDir?: string; config?: string; workers?: number }) => {
      // Loaded on use: the server's modules take seconds to load, which every other command would pay.
      const { serve } = await import('./serve.js');
      await serve({
        ...(options.port !== undefined ? { port: options.port } : {}),
        ...(options.host !== undefined ? { host: options.host } : {}),
        ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
        ...(options.config !== undefined ? { configPath: options.config } : {}),
        ...(options.workers !== undefined ? { workers: options.workers } : {}),
      });
    });
}

/** The package's version: package.json is two folders up from both src/cli/ and dist/cli/. */
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command('modelgate')
  .description('Self-hosted, OpenAI-compatible model gateway')
  .version(version, '-V, --version', 'print the version of modelgate')
  .showHelpAfterError()
  .enablePositionalOptions();

registerServeCommand(program);
registerKeysCommand(program);
registerTeamsCommand(program);
registerProvidersCommand(program);
registerModelsCommand(program);
registerAgentsCommand(program);
registerLogsCommand(program);
registerUsageCommand(program);
registerUsersCommand(program);
registerStatusCommand(program);
registerCacheCommand(program);
registerAuditCommand(program);
registerBudgetsCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  // Failures the CLI expects (gateway errors, unreachable server, missing token) are one line.
  process.stderr.write(`modelgate: ${inert((error as Error).message)}\n`);
  process.exit(1);
});
