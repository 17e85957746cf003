import type { Kysely, Selectable } from 'kysely';
import { randomHex } from '../crypto/index.js';
import { invalidBody } from '../errors/index.js';
import { redactValue } from '../redaction/index.js';
import type { AuditLogTable, Database } from '../storage/index.js';
import { SYSTEM_ACTOR, TOKEN_ACTOR, type AuditActor, type AuditChange, type AuditEntryView, type AuditFilter, type AuditOrigin } from './types.js';

export type AuditRow = Selectable<AuditLogTable>;

/** What a page's cursor is: the id of its last entry. */
const ID_PATTERN = /^aud_[0-9a-f]{28}$/;
const EXPORT_PAGE = 500;
const LOW_24_BITS = 0x100_0000;

let lastMs = -1;
let sequence = 0;

/**
 * `aud_`, 12 hex digits of the time in milliseconds, 4 of a sequence within the millisecond
 * (this process's entries keep their order), then 12 random: ids sort as entries were made.
 */
function entryId(now: number): string {
  sequence = now === lastMs ? (sequence + 1) & 0xffff : 0;
  lastMs = now;
  const high = Math.floor(now / LOW_24_BITS);
  const time = `${high.toString(16).padStart(6, '0')}${(now - high * LOW_24_BITS).toString(16).padStart(6, '0')}`;
  return `aud_${time}${sequence.toString(16).padStart(4, '0')}${randomHex(6)}`;
}

/** A before/after value as stored: redacted (fields named like secrets, secret-shaped text), as JSON. */
function stored(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(redactValue(value));
}

function actorColumns(actor: AuditActor): Pick<AuditRow, 'actor_kind' | 'actor' | 'actor_id'> {
  if (actor.kind === 'user') return { actor_kind: 'user', actor: actor.email, actor_id: actor.id };
  return { actor_kind: actor.kind, actor: actor.kind === 'token' ? TOKEN_ACTOR : SYSTEM_ACTOR, actor_id: null };
}

export function toAuditView(row: AuditRow): AuditEntryView {
  return {
    id: row.id,
    at: new Date(Number(row.at)).toISOString(),
    actor: { kind: row.actor_kind, name: row.actor, id: row.actor_id },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    before: row.before === null ? null : (JSON.parse(row.before) as unknown),
    after: row.after === null ? null : (JSON.parse(row.after) as unknown),
    request_id: row.request_id,
    address: row.address,
  };
}

/** Parses a page cursor of the audit list; a bad one is the caller's mistake. */
export function parseAuditCursor(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!ID_PATTERN.test(value)) throw invalidBody('cursor must be the next_cursor of a previous page of GET /admin/v1/audit.', 'cursor');
  return value;
}

/** The audit log's table: entries are appended, listed newest first, and deleted when older than the retention. */
export class AuditStore {
  constructor(private readonly db: Kysely<Database>) {}

  async record(actor: AuditActor, change: AuditChange, origin: AuditOrigin = {}, now: number = Date.now()): Promise<AuditRow> {
    const row: AuditRow = {
      id: entryId(now),
      at: now,
      ...actorColumns(actor),
      action: change.action,
      target_type: change.target.type,
      target_id: change.target.id,
      before: stored(change.before),
      after: stored(change.after),
      request_id: origin.requestId ?? null,
      address: origin.address ?? null,
    };
    await this.db.insertInto('audit_log').values(row).execute();
    return row;
  }

  /** A page of entries matching `filter`, newest first, after the entry `cursor` names. */
  async list(filter: AuditFilter, limit: number, cursor?: string): Promise<{ rows: AuditRow[]; next: string | null }> {
    let query = this.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(limit + 1);
    if (cursor !== undefined) query = query.where('id', '<', cursor);
    if (filter.actor !== undefined) {
      const actor = filter.actor;
      query = query.where((eb) => eb.or([eb('actor', '=', actor.toLowerCase()), eb('actor', '=', actor), eb('actor_id', '=', actor)]));
    }
    if (filter.action !== undefined) {
      query = filter.action.includes('.') ? query.where('action', '=', filter.action) : query.where('action', 'like', `${filter.action}.%`);
    }
    if (filter.target !== undefined) query = query.where('target_id', '=', filter.target);
    if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
    if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('at', '<', filter.until);
    const rows = await query.execute();
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { rows: page, next: more ? page[page.length - 1]!.id : null };
  }

  /** Every matching entry, newest first, a page at a time (memory stays bounded). */
  async *export(filter: AuditFilter): AsyncGenerator<AuditRow> {
    let cursor: string | undefined;
    do {
      const { rows, next } = await this.list(filter, EXPORT_PAGE, cursor);
      yield* rows;
      cursor = next ?? undefined;
    } while (cursor !== undefined);
  }

  /** Retention (audit.retentionDays): deletes up to `batchSize` entries made before `cutoff`. */
  async deleteOlderThan(cutoff: number, batchSize: number): Promise<number> {
    const result = await this.db
      .deleteFrom('audit_log')
      .where('id', 'in', (eb) => eb.selectFrom('audit_log').select('id').where('at', '<', cutoff).limit(batchSize))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
