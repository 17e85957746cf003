import type { Kysely } from 'kysely';
import type { McpServerConfig } from '../config/index.js';
import type { Database } from '../storage/index.js';

/** MCP servers an administrator added (docs/mcp.md), kept as their config entries. */
export class McpServerStore {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<McpServerConfig[]> {
    const rows = await this.db.selectFrom('mcp_servers').select('definition').orderBy('created_at', 'asc').orderBy('name', 'asc').execute();
    return rows.map((row) => JSON.parse(row.definition) as McpServerConfig);
  }

  /** Adds or replaces the server of this name. */
  async put(server: McpServerConfig): Promise<void> {
    const now = Date.now();
    const definition = JSON.stringify(server);
    await this.db
      .insertInto('mcp_servers')
      .values({ name: server.name, definition, created_at: now, updated_at: now })
      .onConflict((conflict) => conflict.column('name').doUpdateSet({ definition, updated_at: now }))
      .execute();
  }

  /** Removes the server; false when there was none of this name. */
  async remove(name: string): Promise<boolean> {
    const result = await this.db.deleteFrom('mcp_servers').where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
