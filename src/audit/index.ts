export { AuditStore, parseAuditCursor, toAuditView } from './audit-store.js';
export type { AuditRow } from './audit-store.js';
export { auditCsvHeader, auditCsvLine } from './audit-csv.js';
export { SYSTEM_ACTOR, TOKEN_ACTOR } from './types.js';
export type { AuditActor, AuditChange, AuditEntryView, AuditFilter, AuditOrigin } from './types.js';
