import type { Command } from 'commander';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { printJson, printText } from './output.js';

/** `modelgate cache clear [--project ID]`: removes cached answers through DELETE /admin/v1/cache (docs/cli.md, docs/caching.md). */

interface ClearedView {
  object: 'cache.cleared';
  project: string | null;
  cleared: number;
  store: 'memory' | 'redis';
}

export function registerCacheCommand(program: Command): void {
  const cache = program.command('cache').description('the response cache (docs/caching.md)');
  withAdminOptions(cache.command('clear').description("remove cached answers: every one, or one project's"))
    .option('--project <id>', "only this project's answers (its keys' own too)")
    .action(async (options: AdminOptions & { project?: string }) => {
      const client = AdminClient.fromOptions(options);
      const query = options.project === undefined ? '' : `?project=${encodeURIComponent(options.project)}`;
      const cleared = await client.request<ClearedView>('DELETE', `/cache${query}`);
      if (options.json === true) {
        printJson(cleared);
        return;
      }
      const scope = cleared.project === null ? 'every project' : `project ${cleared.project}`;
      // The in-process store is each instance's own: the others keep theirs.
      const reach = cleared.store === 'redis' ? 'on every instance (Redis)' : 'on this instance (each instance keeps its own without Redis)';
      printText(`Cleared ${cleared.cleared} cached answer${cleared.cleared === 1 ? '' : 's'} of ${scope} ${reach}.\n`);
    });
}
