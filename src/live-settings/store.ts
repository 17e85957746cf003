import type { Kysely } from 'kysely';
import type { Database } from '../storage/index.js';

export type LiveScope = 'model' | 'alias' | 'routing';

/** One setting an administrator made, as the store holds it. */
export interface StoredSetting {
  scope: LiveScope;
  name: string;
  value: unknown;
  note: string | null;
  updatedBy: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * Catalog models, aliases and routing entries set through the admin API (docs/catalog.md#models-managed-live):
 * one row each, its value as JSON. Small enough to be read whole whenever one changes.
 */
export class LiveSettingsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<StoredSetting[]> {
    const rows = await this.db.selectFrom('live_settings').selectAll().orderBy('scope').orderBy('name').execute();
    return rows.map((row) => ({
      scope: row.scope,
      name: row.name,
      value: JSON.parse(row.value) as unknown,
      note: row.note,
      updatedBy: row.updated_by,
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    }));
  }

  /** Adds the setting, or replaces the one of its scope and name. */
  async put(setting: Pick<StoredSetting, 'scope' | 'name' | 'value' | 'note' | 'updatedBy'>): Promise<void> {
    const now = Date.now();
    const values = { value: JSON.stringify(setting.value), note: setting.note, updated_by: setting.updatedBy, updated_at: now };
    await this.db
      .insertInto('live_settings')
      .values({ scope: setting.scope, name: setting.name, ...values, created_at: now })
      .onConflict((conflict) => conflict.columns(['scope', 'name']).doUpdateSet(values))
      .execute();
  }

  /** Removes the setting; false when there was none. */
  async remove(scope: LiveScope, name: string): Promise<boolean> {
    const result = await this.db.deleteFrom('live_settings').where('scope', '=', scope).where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
