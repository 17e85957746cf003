export type { AttemptRecord, CacheRecord, LoggedErrorCode, ModelCallRecord, ToolCallRecord, RecordMode, RequestRecord, MediaSummary, LogAccess, LogFilter, UsageGrouping } from './types.js';
export { addKnownSecrets, redactText, redactValue, mediaReference, REDACTED } from '../redaction/index.js';
export type { RedactionOptions } from '../redaction/index.js';
export { computeCost, computeCombinedCost } from './cost.js';
export type { Cost, CostInput } from './cost.js';
export { toLogRow } from './log-entry.js';
export type { Caller, FinishedRequest, LogEntryOptions, QueuedRequest, RequestLogRow } from './log-entry.js';
export { LogStore } from './log-store.js';
export type { LogStoreSize } from './log-store.js';
export type { RefusedLogRow } from './log-insert.js';
export type { LogPage } from './log-queries.js';
export type { LogSummaryRow, StoredLogRow } from './log-rows.js';
export type { UsageRow } from './log-usage.js';
export { LogWriter } from './log-writer.js';
export type { LogSink, LogWriterEvents, LogWriterOptions } from './log-writer.js';
export { LogWriterThread, PAYLOAD_TOO_DEEP } from './log-writer-thread.js';
export type { LogThreadEvents, LogThreadOptions } from './log-writer-thread.js';
export { RetentionJob, RETENTION_DEFAULTS } from './retention-job.js';
export { SizeCapJob, SIZE_CAP_DEFAULTS } from './size-cap-job.js';
export type { SizeCapOptions } from './size-cap-job.js';
export { RefusalSummary, OTHER_ADDRESSES } from './refusal-summary.js';
export type { RefusalSummaryOptions } from './refusal-summary.js';
export type { RetentionOptions, RetentionStore } from './retention-job.js';
export { toDetailView, toSummaryView, toUsageView } from './log-view.js';
export { spendOfKeys, MAX_SPEND_KEYS } from './key-spend.js';
export type { KeySpendView } from './key-spend.js';
export { csvCell, csvHeader, csvLine } from './log-csv.js';
export type { LogDetailView, LogSummaryView, UsageView } from './log-view.js';
export {
  parseLogFilter,
  parsePageSize,
  parseCursor,
  encodeCursor,
  parseGrouping,
  USAGE_GROUPINGS,
  parseExportFormat,
  parseTime,
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  REQUEST_ID_PATTERN,
} from './log-filters.js';
export type { LogQueryParameters, LogCursor, ExportFormat } from './log-filters.js';
export { overviewOf, recentProviderCalls } from './recent-calls.js';
export type { OverviewBucket, OverviewView, ProviderRecentView, RecentFailure } from './recent-calls.js';
