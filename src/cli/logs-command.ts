import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { InvalidArgumentError, type Command } from 'commander';
import type { LogDetailView, LogSummaryView } from '../logs/index.js';
import { AdminClient, withAdminOptions, type AdminOptions } from './admin-client.js';
import { parseWholeNumber } from './arguments.js';
import { keyLabel, keyNames } from './key-names.js';
import { formatUsd, orDash, printFields, printJson, printTable, jsonText, printText } from './output.js';

/** `modelgate logs …` and the filters it shares with `modelgate usage` (docs/cli.md). */

export interface FilterOptions {
  key?: string;
  keyName?: string;
  model?: string;
  project?: string;
  since?: string;
  until?: string;
  status?: string;
}

const TIME_HELP = 'ISO 8601 date/time, or a duration ago such as 15m, 24h, 7d';

/** Adds the log filters; the gateway validates the values and names a bad one. */
export function withFilterOptions(command: Command): Command {
  return command
    .option('--key <id>', 'only this key (key_…)')
    .option('--key-name <name>', 'only the keys with this name')
    .option('--model <id>', 'only this model (requested id/alias or the model it resolved to)')
    .option('--project <id>', 'only this project')
    .option('--since <time>', `from this time (${TIME_HELP})`)
    .option('--until <time>', `before this time (${TIME_HELP})`);
}

/** The admin API's query string for the options that were given. */
export function queryOf(parameters: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, String(value));
  const text = query.toString();
  return text.length > 0 ? `?${text}` : '';
}

function filterParameters(options: FilterOptions): Record<string, string | undefined> {
  return { key: options.key, key_name: options.keyName, model: options.model, project: options.project, since: options.since, until: options.until, status: options.status };
}

function formatCost(costUsd: number | null, startingPrice: boolean): string {
  if (costUsd === null) return '-';
  // A starting price is the least the call cost (a tiered price whose tier is unknown).
  return `${startingPrice ? 'from ' : ''}${formatUsd(costUsd)}`;
}

function printLogTable(page: { data: LogSummaryView[]; next_cursor: string | null }, names: ReadonlyMap<string, string>): void {
  if (page.data.length === 0) {
    printText('No log records match.\n');
    return;
  }
  printTable(
    ['time', 'request id', 'key', 'model', 'status', 'ms', 'tokens', 'cost'],
    page.data.map((record) => [
      record.created_at,
      record.request_id,
      keyLabel(record.key_id, names),
      record.agent === null ? orDash(record.resolved_model ?? record.requested_model) : `agent ${record.agent}`,
      record.error_code === null ? String(record.status) : `${record.status} ${record.error_code}`,
      String(record.latency_ms),
      orDash(record.usage?.total_tokens ?? null),
      formatCost(record.cost_usd, record.cost_is_starting_price),
    ]),
  );
  if (page.next_cursor !== null) printText(`\nMore records: add --cursor ${page.next_cursor}\n`);
}

/** Why a record has no payloads, as `logs show` says it. */
const PAYLOADS_OMITTED: Record<string, string> = {
  queue_bytes: 'shed while the log queue was over logs.queueMaxBytes',
  size_cap: "dropped by the log's size cap",
};

function printLogRecord(record: LogDetailView): void {
  printFields([
    ['request id', record.request_id],
    ['time', record.created_at],
    ['endpoint', record.endpoint],
    ['mode', orDash(record.mode)],
    ['platform', orDash(record.platform)],
    ['key', orDash(record.fingerprint)],
    ['project', orDash(record.project_id)],
    ['model', `${orDash(record.requested_model)} → ${orDash(record.resolved_model)} (${orDash(record.provider)})`],
    ...(record.agent === null ? [] : [['agent', record.agent] as [string, string]]),
    ['provider request id', orDash(record.provider_request_id)],
    ['status', record.error_code === null ? String(record.status) : `${record.status} ${record.error_code}`],
    ['latency ms', `${record.latency_ms} (upstream ${orDash(record.upstream_latency_ms)})`],
    ['streaming', String(record.streaming)],
    ['tokens', record.usage === null ? '-' : `${orDash(record.usage.prompt_tokens)} in, ${orDash(record.usage.completion_tokens)} out, ${orDash(record.usage.cached_tokens)} cached`],
    ['images', orDash(record.image_count)],
    ['audio seconds', orDash(record.audio_seconds)],
    ['cost', formatCost(record.cost_usd, record.cost_is_starting_price)],
    ...(record.payloads_omitted === null ? [] : [['payloads', `omitted (${PAYLOADS_OMITTED[record.payloads_omitted] ?? record.payloads_omitted})`] as const]),
  ]);
  for (const [title, value] of [
    ['media', record.media],
    ['detail', record.detail],
    ['request', record.request_payload],
    ['response', record.response_payload],
  ] as const) {
    if (value !== null) printText(`\n${title}:\n${jsonText(value)}\n`);
  }
}

interface LogStorageView {
  database: 'sqlite' | 'postgres';
  database_bytes: number;
  records: number;
  payload_bytes: number;
  counted_bytes: number;
  max_bytes: number | null;
  reclaims_free_pages: boolean | null;
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function printLogStorage(storage: LogStorageView): void {
  printFields([
    ['database', storage.database],
    ['on disk', mebibytes(storage.database_bytes)],
    ['records', String(storage.records)],
    ['payloads', mebibytes(storage.payload_bytes)],
    ['size cap', storage.max_bytes === null ? 'none' : `${mebibytes(storage.counted_bytes)} of ${mebibytes(storage.max_bytes)}`],
    ...(storage.reclaims_free_pages === false ? [['note', 'the file never shrinks until a one-time VACUUM (docs/logging.md)'] as [string, string]] : []),
  ]);
}

function parseFormat(value: string): 'jsonl' {
  if (value !== 'jsonl') throw new InvalidArgumentError('the only export format is jsonl (one JSON record per line)');
  return value;
}

export function registerLogsCommand(program: Command): void {
  const logs = program.command('logs').description('read the request log (talks to a running gateway)');

  withAdminOptions(withFilterOptions(logs.command('list').description('list request log records, newest first')))
    .option('--status <s>', 'only this status: a code (429), a class (4xx), success or error')
    .option('--limit <n>', 'records per page (1-1000, default 50)', parseWholeNumber)
    .option('--cursor <c>', 'the next page, as printed after the previous one')
    .action(async (options: AdminOptions & FilterOptions & { limit?: number; cursor?: string }) => {
      const query = queryOf({ ...filterParameters(options), limit: options.limit, cursor: options.cursor });
      const client = AdminClient.fromOptions(options);
      const page = await client.request<{ data: LogSummaryView[]; next_cursor: string | null }>('GET', `/logs${query}`);
      if (options.json === true) printJson(page);
      else {
        // The gateway names each record's key; names from the key list only for one that does not.
        const named = new Map(page.data.flatMap((record) => (record.key_id !== null && typeof record.key_name === 'string' ? [[record.key_id, record.key_name] as const] : [])));
        printLogTable(page, page.data.every((record) => record.key_id === null || named.has(record.key_id)) ? named : await keyNames(client));
      }
    });

  withAdminOptions(logs.command('show').description('one record in full: payloads and upstream detail').argument('<request-id>', 'the x-request-id of the request')).action(
    async (requestId: string, options: AdminOptions) => {
      const record = await AdminClient.fromOptions(options).request<LogDetailView>('GET', `/logs/${encodeURIComponent(requestId)}`);
      if (options.json === true) printJson(record);
      else printLogRecord(record);
    },
  );

  withAdminOptions(logs.command('storage').description("the log's size on disk, its counts and its size cap")).action(async (options: AdminOptions) => {
    const storage = await AdminClient.fromOptions(options).request<LogStorageView>('GET', '/logs/storage');
    if (options.json === true) printJson(storage);
    else printLogStorage(storage);
  });

  withAdminOptions(withFilterOptions(logs.command('export').description('every matching record in full, one JSON object per line, to stdout')))
    .option('--format <format>', 'jsonl, the only format (default)', parseFormat, 'jsonl' as const)
    .option('--status <s>', 'only this status: a code (429), a class (4xx), success or error')
    .action(async (options: AdminOptions & FilterOptions & { format: 'jsonl' }) => {
      const body = await AdminClient.fromOptions(options).stream(`/logs/export${queryOf({ ...filterParameters(options), format: options.format })}`);
      await pipeline(Readable.fromWeb(body as WebReadableStream), process.stdout);
    });
}
