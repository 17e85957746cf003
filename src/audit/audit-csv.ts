import { csvCell } from '../logs/index.js';
import type { AuditEntryView } from './types.js';

/** The audit log as CSV (RFC 4180): one row per entry, before and after as JSON text. */
const COLUMNS: readonly [string, (view: AuditEntryView) => string | null][] = [
  ['at', (view) => view.at],
  ['id', (view) => view.id],
  ['actor_kind', (view) => view.actor.kind],
  ['actor', (view) => view.actor.name],
  ['actor_id', (view) => view.actor.id],
  ['action', (view) => view.action],
  ['target_type', (view) => view.target.type],
  ['target_id', (view) => view.target.id],
  ['before', (view) => (view.before === null ? null : JSON.stringify(view.before))],
  ['after', (view) => (view.after === null ? null : JSON.stringify(view.after))],
  ['request_id', (view) => view.request_id],
  ['address', (view) => view.address],
];

export function auditCsvHeader(): string {
  return `${COLUMNS.map(([name]) => name).join(',')}\r\n`;
}

export function auditCsvLine(view: AuditEntryView): string {
  return `${COLUMNS.map(([, read]) => csvCell(read(view))).join(',')}\r\n`;
}
