export type { RequestRecord, MediaSummary, LogAccess, LogFilter, UsageGrouping } from './types.js';
export { addKnownSecrets, redactText, redactValue, mediaReference, REDACTED } from './redaction.js';
export type { RedactionOptions } from './redaction.js';
export { computeCost, computeCombinedCost } from './cost.js';
export type { Cost, CostInput } from './cost.js';
export { toLogRow } from './log-entry.js';
export type { Caller, FinishedRequest, LogEntryOptions, RequestLogRow } from './log-entry.js';
export { LogStore } from './log-store.js';
export type { LogSummaryRow, RefusedLogRow, StoredLogRow, UsageRow } from './log-store.js';
export { LogWriter } from './log-writer.js';
export type { LogSink, LogWriterEvents, LogWriterOptions } from './log-writer.js';
export { RetentionJob, RETENTION_DEFAULTS } from './retention-job.js';
export type { RetentionOptions, RetentionStore } from './retention-job.js';
export { toDetailView, toSummaryView, toUsageView } from './log-view.js';
export type { LogDetailView, LogSummaryView, UsageView } from './log-view.js';
export {
  parseLogFilter,
  parsePageSize,
  parseCursor,
  encodeCursor,
  parseGrouping,
  parseExportFormat,
  parseTime,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  REQUEST_ID_PATTERN,
} from './log-filters.js';
export type { LogQueryParameters, LogCursor } from './log-filters.js';
