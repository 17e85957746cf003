import type { Kysely, Selectable } from 'kysely';
import type { AgentAssetsTable, Database } from '../../storage/index.js';

export type AssetRow = Selectable<AgentAssetsTable>;

/** Metadata of agent media (the bytes are in the media store). */
export class AssetRecords {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: readonly AssetRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('agent_assets').values([...rows]).execute();
  }

  async get(id: string): Promise<AssetRow | undefined> {
    return this.db.selectFrom('agent_assets').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getMany(ids: readonly string[]): Promise<Map<string, AssetRow>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('agent_assets').selectAll().where('id', 'in', [...ids]).execute();
    return new Map(rows.map((row) => [row.id, row]));
  }
}
