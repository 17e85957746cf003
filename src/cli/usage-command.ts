import { InvalidArgumentError, type Command } from 'commander';
import type { UsageGrouping, UsageView } from '../logs/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { queryOf, withFilterOptions, type FilterOptions } from './logs-command.js';
import { orDash, printJson, printTable } from './output.js';

/** `modelgate usage`: requests, tokens and cost per day, model or key (decisions §5). */

const GROUPINGS: readonly UsageGrouping[] = ['day', 'model', 'key'];

function parseGrouping(value: string): UsageGrouping {
  if (!(GROUPINGS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${GROUPINGS.join(', ')}`);
  return value as UsageGrouping;
}

function groupOf(grouping: UsageGrouping, row: UsageView): string {
  if (grouping === 'day') return orDash(row.day ?? null);
  if (grouping === 'model') return orDash(row.model ?? null);
  return orDash(row.key_id ?? null);
}

function printUsage(grouping: UsageGrouping, rows: UsageView[]): void {
  if (rows.length === 0) {
    process.stdout.write('No requests in this period.\n');
    return;
  }
  printTable(
    [grouping, 'requests', 'errors', 'prompt tokens', 'completion tokens', 'total tokens', 'cost usd', 'unpriced'],
    rows.map((row) => [
      groupOf(grouping, row),
      String(row.requests),
      String(row.errors),
      String(row.prompt_tokens),
      String(row.completion_tokens),
      String(row.total_tokens),
      row.cost_usd.toFixed(6),
      String(row.unpriced_requests),
    ]),
  );
}

export function registerUsageCommand(program: Command): void {
  withAdminOptions(withFilterOptions(program.command('usage').description('requests, tokens and cost per day, model or key')))
    .option('--by <grouping>', 'day, model or key (default day)', parseGrouping)
    .action(async (options: AdminOptions & FilterOptions & { by?: UsageGrouping }) => {
      const grouping = options.by ?? 'day';
      const query = queryOf({ by: grouping, key: options.key, model: options.model, project: options.project, since: options.since, until: options.until });
      const usage = await AdminClient.fromOptions(options).request<{ data: UsageView[] }>('GET', `/usage${query}`);
      if (options.json === true) printJson(usage);
      else printUsage(grouping, usage.data);
    });
}
