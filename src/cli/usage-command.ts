import { InvalidArgumentError, type Command } from 'commander';
import { USAGE_GROUPINGS, type UsageGrouping, type UsageView } from '../logs/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { keyLabel, keyNames } from './key-names.js';
import { queryOf, withFilterOptions, type FilterOptions } from './logs-command.js';
import { formatUsd, orDash, printJson, printTable, printText } from './output.js';

/** `modelgate usage`: requests, tokens and cost per day, model or key, and what the response cache saved (docs/cli.md). */

function parseGrouping(value: string): UsageGrouping {
  if (!(USAGE_GROUPINGS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${USAGE_GROUPINGS.join(', ')}`);
  return value as UsageGrouping;
}

function groupOf(grouping: UsageGrouping, row: UsageView, names: ReadonlyMap<string, string>): string {
  if (grouping === 'day') return orDash(row.day ?? null);
  if (grouping === 'model') return orDash(row.model ?? null);
  if (grouping === 'project') return orDash(row.project_id ?? null);
  if (grouping === 'end_user') return orDash(row.end_user ?? null);
  return keyLabel(row.key_id, names);
}

function printUsage(grouping: UsageGrouping, rows: UsageView[], names: ReadonlyMap<string, string>): void {
  if (rows.length === 0) {
    printText('No requests in this period.\n');
    return;
  }
  printTable(
    [grouping, 'requests', 'errors', 'prompt tokens', 'completion tokens', 'total tokens', 'cost', 'unpriced', 'cache hits', 'saved'],
    rows.map((row) => [
      groupOf(grouping, row, names),
      String(row.requests),
      String(row.errors),
      String(row.prompt_tokens),
      String(row.completion_tokens),
      String(row.total_tokens),
      formatUsd(row.cost_usd),
      String(row.unpriced_requests),
      String(row.cache_hits),
      formatUsd(row.saved_usd),
    ]),
  );
}

export function registerUsageCommand(program: Command): void {
  withAdminOptions(withFilterOptions(program.command('usage').description('requests, tokens and cost per day, model, key or project')))
    .option('--by <grouping>', `${USAGE_GROUPINGS.join(', ')} (default day)`, parseGrouping)
    .action(async (options: AdminOptions & FilterOptions & { by?: UsageGrouping }) => {
      const grouping = options.by ?? 'day';
      const query = queryOf({ by: grouping, key: options.key, model: options.model, project: options.project, since: options.since, until: options.until });
      const client = AdminClient.fromOptions(options);
      const usage = await client.request<{ data: UsageView[] }>('GET', `/usage${query}`);
      if (options.json === true) printJson(usage);
      else printUsage(grouping, usage.data, grouping === 'key' ? await keyNames(client) : new Map());
    });
}
