import type { LogSummaryView } from './log-view.js';

/**
 * The request log as CSV (RFC 4180): one row per record with the list view's fields, no
 * payloads (a spreadsheet is not the place for them; the JSONL export has them). A cell
 * that a spreadsheet would run as a formula (= + - @ at its start) gets a leading quote.
 */

const COLUMNS: readonly [string, (view: LogSummaryView) => string | number | boolean | null][] = [
  ['created_at', (view) => view.created_at],
  ['request_id', (view) => view.request_id],
  ['endpoint', (view) => view.endpoint],
  ['platform', (view) => view.platform],
  ['key_id', (view) => view.key_id],
  ['project_id', (view) => view.project_id],
  ['requested_model', (view) => view.requested_model],
  ['resolved_model', (view) => view.resolved_model],
  ['agent', (view) => view.agent],
  ['status', (view) => view.status],
  ['error_code', (view) => view.error_code],
  ['latency_ms', (view) => view.latency_ms],
  ['streaming', (view) => view.streaming],
  ['prompt_tokens', (view) => view.usage?.prompt_tokens ?? null],
  ['completion_tokens', (view) => view.usage?.completion_tokens ?? null],
  ['total_tokens', (view) => view.usage?.total_tokens ?? null],
  ['cost_usd', (view) => view.cost_usd],
];

/** One CSV cell; text a spreadsheet would run as a formula gets a leading quote. */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvHeader(): string {
  return `${COLUMNS.map(([name]) => name).join(',')}\r\n`;
}

export function csvLine(view: LogSummaryView): string {
  return `${COLUMNS.map(([, read]) => csvCell(read(view))).join(',')}\r\n`;
}
