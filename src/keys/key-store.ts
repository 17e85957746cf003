import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { GatewayError } from '../errors/index.js';
import type { ApiKeysTable, Database } from '../storage/index.js';
import { ProjectStore } from './project-store.js';
import { fingerprintOf, generateSecret, hashSecret } from './secret.js';
import { canTake, nextStatus, type KeyAction } from './state-machine.js';
import type { ApiKeyView, KeyLimits, Scope } from './types.js';

export type KeyRow = Selectable<ApiKeysTable>;

export interface NewKey {
  name: string;
  projectId: string;
  scopes: Scope[];
  limits: KeyLimits;
  allowedModels: string[] | null;
  allowedTools?: string[] | null;
  allowUnpriced?: boolean;
  /** Epoch ms; null or absent = never expires. */
  expiresAt?: number | null;
  tags?: string[];
  metadata?: Record<string, string>;
}

export interface KeyChanges {
  name?: string;
  scopes?: Scope[];
  limits?: Partial<KeyLimits>;
  allowedModels?: string[] | null;
  allowedTools?: string[] | null;
  allowUnpriced?: boolean;
  expiresAt?: number | null;
  tags?: string[];
  metadata?: Record<string, string>;
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
const tagsColumn = (tags: readonly string[] | undefined) => (tags === undefined || tags.length === 0 ? null : JSON.stringify([...new Set(tags)]));
const metadataColumn = (metadata: Record<string, string> | undefined) => (metadata === undefined || Object.keys(metadata).length === 0 ? null : JSON.stringify(metadata));

/** Whether the secret with this hash is one a rotation replaced and whose grace period is over (or never was). */
export function isReplacedSecret(row: KeyRow, hash: string, now: number): boolean {
  return hash !== row.secret_hash && (row.previous_secret_hash !== hash || row.previous_secret_expires_at === null || now >= Number(row.previous_secret_expires_at));
}

export function toKeyView(row: KeyRow): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    project_id: row.project_id,
    status: row.status,
    scopes: JSON.parse(row.scopes) as Scope[],
    fingerprint: fingerprintOf(row.id, row.last4),
    limits: { rpm: row.rpm_limit, daily_tokens: row.daily_token_cap, monthly_cost_usd: row.monthly_cost_cap_usd },
    allowed_models: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
    allowed_tools: row.allowed_tools === null ? null : (JSON.parse(row.allowed_tools) as string[]),
    allow_unpriced: Number(row.allow_unpriced) === 1,
    expires_at: isoOrNull(row.expires_at),
    previous_secret_expires_at: row.previous_secret_hash === null ? null : isoOrNull(row.previous_secret_expires_at),
    tags: row.tags === null ? [] : (JSON.parse(row.tags) as string[]),
    metadata: row.metadata === null ? {} : (JSON.parse(row.metadata) as Record<string, string>),
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Key records in the database. Every change bumps updated_at so other instances' caches see it. */
export class KeyStore {
  private readonly projects: ProjectStore;

  constructor(private readonly db: Kysely<Database>) {
    this.projects = new ProjectStore(db);
  }

  async create(input: NewKey): Promise<{ row: KeyRow; secret: string }> {
    await this.projects.ensure(input.projectId);
    const secret = generateSecret();
    const now = Date.now();
    const row: KeyRow = {
      id: `key_${randomBytes(8).toString('hex')}`,
      project_id: input.projectId,
      name: input.name,
      secret_hash: hashSecret(secret),
      last4: secret.slice(-4),
      scopes: JSON.stringify([...new Set(input.scopes)]),
      status: 'active',
      rpm_limit: input.limits.rpm,
      daily_token_cap: input.limits.dailyTokens,
      monthly_cost_cap_usd: input.limits.monthlyCostUsd,
      allowed_models: input.allowedModels === null ? null : JSON.stringify(input.allowedModels),
      allowed_tools: input.allowedTools === undefined || input.allowedTools === null ? null : JSON.stringify(input.allowedTools),
      allow_unpriced: input.allowUnpriced === true ? 1 : 0,
      created_at: now,
      updated_at: now,
      expires_at: input.expiresAt ?? null,
      previous_secret_hash: null,
      previous_secret_expires_at: null,
      tags: tagsColumn(input.tags),
      metadata: metadataColumn(input.metadata),
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { row, secret };
  }

  async list(projectId?: string): Promise<KeyRow[]> {
    let query = this.db.selectFrom('api_keys').selectAll().orderBy('created_at', 'asc');
    if (projectId !== undefined) query = query.where('project_id', '=', projectId);
    return query.execute();
  }

  async get(id: string): Promise<KeyRow> {
    const row = await this.find(id);
    if (row === undefined) throw new GatewayError('not_found', `There is no key with id "${id}". List keys with GET /admin/v1/keys.`);
    return row;
  }

  /** The key whose secret (or the secret its rotation replaced) has this hash, if any: what an instance asks for a secret its cache does not hold. */
  async findByHash(hash: string): Promise<KeyRow | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) => eb.or([eb('secret_hash', '=', hash), eb('previous_secret_hash', '=', hash)]))
      .executeTakeFirst();
  }

  /** The key with this id, if any: what an instance re-reads when another says it changed. */
  async find(id: string): Promise<KeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async changedSince(since: number): Promise<KeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('updated_at', '>=', since).execute();
  }

  async transition(id: string, action: KeyAction): Promise<KeyRow> {
    const row = await this.get(id);
    const status = nextStatus(row.status, action);
    // The status guard makes a racing transition (e.g. resume after revoke) lose, never win.
    const result = await this.db
      .updateTable('api_keys')
      .set({ status, updated_at: nextVersion() })
      .where('id', '=', id)
      .where('status', '=', row.status)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      throw new GatewayError('conflict', `The key ${id} changed while it was being updated; try again.`);
    }
    return this.get(id);
  }

  /**
   * `action` on every key of a project that can take it (a pause skips paused and revoked
   * keys); a key that changed meanwhile keeps its change. Returns the rows before and after.
   */
  async transitionProject(projectId: string, action: KeyAction): Promise<{ before: KeyRow; after: KeyRow }[]> {
    const changed: { before: KeyRow; after: KeyRow }[] = [];
    for (const row of await this.list(projectId)) {
      if (!canTake(row.status, action)) continue;
      try {
        changed.push({ before: row, after: await this.transition(row.id, action) });
      } catch (error) {
        if (!(error instanceof GatewayError && error.code === 'conflict')) throw error;
      }
    }
    return changed;
  }

  async update(id: string, changes: KeyChanges): Promise<KeyRow> {
    const row = await this.get(id);
    if (row.status === 'revoked') throw revokedIsFinal(id);
    const limits = changes.limits ?? {};
    const result = await this.db
      .updateTable('api_keys')
      .set({
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.scopes !== undefined ? { scopes: JSON.stringify([...new Set(changes.scopes)]) } : {}),
        ...(limits.rpm !== undefined ? { rpm_limit: limits.rpm } : {}),
        ...(limits.dailyTokens !== undefined ? { daily_token_cap: limits.dailyTokens } : {}),
        ...(limits.monthlyCostUsd !== undefined ? { monthly_cost_cap_usd: limits.monthlyCostUsd } : {}),
        ...(changes.allowedModels !== undefined
          ? { allowed_models: changes.allowedModels === null ? null : JSON.stringify(changes.allowedModels) }
          : {}),
        ...(changes.allowedTools !== undefined
          ? { allowed_tools: changes.allowedTools === null ? null : JSON.stringify(changes.allowedTools) }
          : {}),
        ...(changes.allowUnpriced !== undefined ? { allow_unpriced: changes.allowUnpriced ? 1 : 0 } : {}),
        ...(changes.expiresAt !== undefined ? { expires_at: changes.expiresAt } : {}),
        ...(changes.tags !== undefined ? { tags: tagsColumn(changes.tags) } : {}),
        ...(changes.metadata !== undefined ? { metadata: metadataColumn(changes.metadata) } : {}),
        updated_at: nextVersion(),
      })
      .where('id', '=', id)
      // A revoke that lands between the read and this write wins.
      .where('status', '!=', 'revoked')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw revokedIsFinal(id);
    return this.get(id);
  }

  /**
   * A new secret for the same key (id, settings, limits and their counters stay). With a grace
   * period the replaced secret keeps working until it ends — on every instance, each checking
   * its own clock; without one it stops at once. A second rotation within the grace period
   * ends the first one's: only the secret just replaced stays accepted.
   */
  async rotate(id: string, graceMs: number, now: number = Date.now()): Promise<{ row: KeyRow; secret: string }> {
    const row = await this.get(id);
    if (row.status === 'revoked') throw revokedIsFinal(id);
    const secret = generateSecret();
    const result = await this.db
      .updateTable('api_keys')
      .set({
        secret_hash: hashSecret(secret),
        last4: secret.slice(-4),
        previous_secret_hash: graceMs > 0 ? row.secret_hash : null,
        previous_secret_expires_at: graceMs > 0 ? now + graceMs : null,
        updated_at: nextVersion(),
      })
      .where('id', '=', id)
      // A racing rotation or revoke wins; this one is refused rather than replacing its secret.
      .where('secret_hash', '=', row.secret_hash)
      .where('status', '!=', 'revoked')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new GatewayError('conflict', `The key ${id} changed while it was being rotated; look at it and try again.`);
    return { row: await this.get(id), secret };
  }
}

/**
 * updated_at of a changed row: now, but always later than the version it replaces — the one
 * in the table when the write lands, not the one read before it, which another instance (its
 * clock up to seconds ahead) may have replaced since. Caches keep the newest version they saw,
 * so a change stamped lower would never reach those that saw the other one.
 */
function nextVersion(): RawBuilder<number> {
  const now = Date.now();
  return sql<number>`case when updated_at >= ${now} then updated_at + 1 else ${now} end`;
}

function revokedIsFinal(id: string): GatewayError {
  return new GatewayError('conflict', `The key "${id}" is revoked, and revocation is final; it can no longer change. Create a new key instead.`, { retryable: false });
}
