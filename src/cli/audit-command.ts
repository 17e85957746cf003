import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { InvalidArgumentError, type Command } from 'commander';
import type { AuditEntryView } from '../audit/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { parseWholeNumber } from './arguments.js';
import { queryOf } from './logs-command.js';
import { orDash, printJson, printTable, printText } from './output.js';

/** `modelgate audit …`: the audit log, a client of `GET /admin/v1/audit` (docs/cli.md#audit). */

interface AuditFilterOptions {
  actor?: string;
  action?: string;
  target?: string;
  targetType?: string;
  since?: string;
  until?: string;
}

const TIME_HELP = 'ISO 8601 date/time, or a duration ago such as 15m, 24h, 7d';

function withAuditFilters(command: Command): Command {
  return command
    .option('--actor <who>', 'an account (email or id), admin-token or system')
    .option('--action <action>', 'an action (key.revoke), or every action on a target type (key)')
    .option('--target <id>', 'the changed object: a key id, user id, agent slug, server name')
    .option('--target-type <type>', 'key, project, user, agent, mcp_server or config')
    .option('--since <time>', `from this time (${TIME_HELP})`)
    .option('--until <time>', `before this time (${TIME_HELP})`);
}

function filterParameters(options: AuditFilterOptions): Record<string, string | undefined> {
  return { actor: options.actor, action: options.action, target: options.target, target_type: options.targetType, since: options.since, until: options.until };
}

/** The top-level fields a change altered, as the table shows them. */
export function changedFields(entry: Pick<AuditEntryView, 'before' | 'after'>): string {
  const { before, after } = entry;
  const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
  if (!isObject(before) || !isObject(after)) return before === null && after === null ? '' : before === null ? 'created' : after === null ? 'removed' : 'changed';
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed = [...names].filter((name) => name !== 'updated_at' && JSON.stringify(before[name]) !== JSON.stringify(after[name]));
  return changed.join(', ');
}

function printEntries(page: { data: AuditEntryView[]; next_cursor: string | null }): void {
  if (page.data.length === 0) {
    printText('No audit log entries match.\n');
    return;
  }
  printTable(
    ['time', 'actor', 'action', 'target', 'changed'],
    page.data.map((entry) => [entry.at, entry.actor.name, entry.action, `${entry.target.type} ${orDash(entry.target.id)}`, orDash(changedFields(entry) || null)]),
  );
  if (page.next_cursor !== null) printText(`\nMore entries: add --cursor ${page.next_cursor}\n`);
}

function parseFormat(value: string): 'jsonl' | 'csv' {
  if (value !== 'jsonl' && value !== 'csv') throw new InvalidArgumentError('expected jsonl (one JSON entry per line) or csv');
  return value;
}

export function registerAuditCommand(program: Command): void {
  const audit = program.command('audit').description('the audit log: who changed what through the admin API (talks to a running gateway)');

  withAdminOptions(withAuditFilters(audit.command('list', { isDefault: true }).description('list audit log entries, newest first (the default)')))
    .option('--limit <n>', 'entries per page (1-500, default 50)', parseWholeNumber)
    .option('--cursor <c>', 'the next page, as printed after the previous one')
    .action(async (options: AdminOptions & AuditFilterOptions & { limit?: number; cursor?: string }) => {
      const query = queryOf({ ...filterParameters(options), limit: options.limit, cursor: options.cursor });
      const page = await AdminClient.fromOptions(options).request<{ data: AuditEntryView[]; next_cursor: string | null }>('GET', `/audit${query}`);
      if (options.json === true) printJson(page);
      else printEntries(page);
    });

  withAdminOptions(withAuditFilters(audit.command('export').description('every matching entry to stdout, as JSON lines (default) or CSV')))
    .option('--format <format>', 'jsonl or csv (default jsonl)', parseFormat, 'jsonl' as const)
    .action(async (options: AdminOptions & AuditFilterOptions & { format: 'jsonl' | 'csv' }) => {
      const body = await AdminClient.fromOptions(options).stream(`/audit/export${queryOf({ ...filterParameters(options), format: options.format })}`);
      await pipeline(Readable.fromWeb(body as WebReadableStream), process.stdout);
    });
}
