import { InvalidArgumentError, type Command } from 'commander';
import { USAGE_GROUPINGS, type UsageGrouping, type UsageView } from '../logs/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { keyLabel, keyNames } from './key-names.js';
import { queryOf, withFilterOptions, type FilterOptions } from './logs-command.js';
import { formatUsd, orDash, printJson, printTable, printText } from './output.js';

/** `modelgate usage`: requests, tokens and cost per day, model, key, project, team, agent or tag, and what the response cache saved (docs/cli.md). */

function parseGrouping(value: string): UsageGrouping {
  if (!(USAGE_GROUPINGS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${USAGE_GROUPINGS.join(', ')}`);
  return value as UsageGrouping;
}

function groupOf(grouping: UsageGrouping, row: UsageView, names: ReadonlyMap<string, string>): string {
  if (grouping === 'day') return orDash(row.day ?? null);
  if (grouping === 'model') return orDash(row.model ?? null);
  if (grouping === 'project') return orDash(row.project_id ?? null);
  if (grouping === 'end_user') return orDash(row.end_user ?? null);
  if (grouping === 'team') return row.team_id === null || row.team_id === undefined ? '-' : `${row.team_id}${row.team_name !== null && row.team_name !== undefined && row.team_name !== row.team_id ? ` (${row.team_name})` : ''}`;
  if (grouping === 'agent') return orDash(row.agent ?? null);
  if (grouping === 'tag') return row.tag === null || row.tag === undefined ? '(untagged)' : row.tag;
  // The key's name as the server gives it (a key deleted since keeps its id only).
  return row.key_name !== null && row.key_name !== undefined && row.key_id !== null && row.key_id !== undefined ? `${row.key_id} (${row.key_name})` : keyLabel(row.key_id, names);
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
  withAdminOptions(withFilterOptions(program.command('usage').description('requests, tokens and cost per day, model, key, project, team, agent or tag')))
    .option('--by <grouping>', `${USAGE_GROUPINGS.join(', ')} (default day)`, parseGrouping)
    .action(async (options: AdminOptions & FilterOptions & { by?: UsageGrouping }) => {
      const grouping = options.by ?? 'day';
      const query = queryOf({ by: grouping, key: options.key, key_name: options.keyName, model: options.model, project: options.project, since: options.since, until: options.until });
      const client = AdminClient.fromOptions(options);
      const usage = await client.request<{ data: UsageView[] }>('GET', `/usage${query}`);
      if (options.json === true) printJson(usage);
      else {
        printUsage(grouping, usage.data, grouping === 'key' && usage.data.some((row) => row.key_name === undefined) ? await keyNames(client) : new Map());
        // A key with two tags counts under both: say so beside the numbers it explains.
        if (grouping === 'tag' && usage.data.length > 0) printText('A key with several tags counts under each: the totals over tags can exceed the period\'s.\n');
      }
    });
}
